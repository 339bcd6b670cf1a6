package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

func clockCall(t *testing.T, h http.Handler, method, ctype, body string) (*httptest.ResponseRecorder, server.ClockState) {
	t.Helper()
	r := httptest.NewRequest(method, "/api/clock", strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var st server.ClockState
	if w.Code == http.StatusOK && method != http.MethodHead {
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
			t.Fatalf("%s %s: %v: %q", method, body, err, w.Body)
		}
	}
	return w, st
}

func TestClockHandler(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	clock := server.NewManualClock(start)
	srv := servertest.New(t, servertest.WithManualClock(clock))
	h := srv.ClockHandler(server.ControlHTTP{})
	if err := srv.Engine().Put([]byte("k"), []byte("v"), engine.PutOptions{TTL: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if w, st := clockCall(t, h, http.MethodGet, "", ""); w.Code != 200 || st.Clock != "manual" || st.Now != start.Format(time.RFC3339Nano) {
		t.Fatalf("GET: %d %+v", w.Code, st)
	}
	const js = "application/json"
	if w, st := clockCall(t, h, http.MethodPost, js, `{"advance":"30s"}`); w.Code != 200 || st.Now != start.Add(30*time.Second).Format(time.RFC3339Nano) {
		t.Fatalf("advance: %d %+v %q", w.Code, st, w.Body)
	}
	if _, ok := srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("the key outlived its TTL after the advance")
	}
	later := start.Add(time.Hour)
	if w, st := clockCall(t, h, http.MethodPost, js+"; charset=utf-8", `{"set":"`+later.Format(time.RFC3339)+`"}`); w.Code != 200 || st.Now != later.Format(time.RFC3339Nano) {
		t.Fatalf("set: %d %+v %q", w.Code, st, w.Body)
	}
	for _, c := range []struct {
		name, method, ctype, body string
		status                    int
		says                      string
	}{
		{"backwards by set", http.MethodPost, js, `{"set":"` + start.Format(time.RFC3339) + `"}`, 409, "only moves forward"},
		{"backwards by advance", http.MethodPost, js, `{"advance":"-1s"}`, 409, "only moves forward"},
		{"set now is before", http.MethodPost, js, `{"set":"now"}`, 409, "only moves forward"},
		{"both", http.MethodPost, js, `{"advance":"1s","set":"now"}`, 400, "exactly one"},
		{"neither", http.MethodPost, js, `{}`, 400, "exactly one"},
		{"unknown field", http.MethodPost, js, `{"rewind":"1s"}`, 400, "unknown field"},
		{"not json", http.MethodPost, js, `advance 1s`, 400, "want"},
		{"bad duration", http.MethodPost, js, `{"advance":"30"}`, 400, "not a duration"},
		{"bad time", http.MethodPost, js, `{"set":"tomorrow"}`, 400, "RFC 3339"},
		{"form", http.MethodPost, "application/x-www-form-urlencoded", `advance=1s`, 415, "application/json"},
		{"too big", http.MethodPost, js, `{"advance":"` + strings.Repeat("1", 5000) + `s"}`, 413, "at most"},
		{"put", http.MethodPut, js, `{"advance":"1s"}`, 405, "not allowed"},
	} {
		w, _ := clockCall(t, h, c.method, c.ctype, c.body)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, w.Code, w.Body, c.status, c.says)
		}
	}
	if got := clock.Now(); !got.Equal(later) {
		t.Fatalf("refused moves moved the clock to %v", got)
	}
	if w, _ := clockCall(t, h, http.MethodHead, "", ""); w.Code != 200 || w.Body.Len() != 0 {
		t.Fatalf("HEAD: %d %q", w.Code, w.Body)
	}
}

func TestClockHandlerOnRealTime(t *testing.T) {
	h := servertest.New(t).ClockHandler(server.ControlHTTP{})
	if w, st := clockCall(t, h, http.MethodGet, "", ""); w.Code != 200 || st.Clock != "real" {
		t.Fatalf("GET: %d %+v", w.Code, st)
	}
	w, _ := clockCall(t, h, http.MethodPost, "application/json", `{"advance":"1s"}`)
	if w.Code != 409 || !strings.Contains(w.Body.String(), "--clock manual") {
		t.Fatalf("advance on real time: %d %q", w.Code, w.Body)
	}
}
