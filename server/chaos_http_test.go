package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

func chaosCall(t *testing.T, h http.Handler, method, ctype, body string) (*httptest.ResponseRecorder, []server.ChaosStatus) {
	t.Helper()
	r := httptest.NewRequest(method, "/api/chaos", strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var st struct {
		Rules []server.ChaosStatus `json:"rules"`
	}
	if w.Code == http.StatusOK && method != http.MethodHead {
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Rules == nil {
			t.Fatalf("%s: %v: %q", method, err, w.Body)
		}
	}
	return w, st.Rules
}

func TestChaosHandler(t *testing.T) {
	srv := servertest.New(t)
	h := srv.ChaosHandler(server.ControlHTTP{})
	if w, rules := chaosCall(t, h, http.MethodGet, "", ""); w.Code != 200 || len(rules) != 0 {
		t.Fatalf("GET: %d %+v", w.Code, rules)
	}
	yamlRules := "rules:\n  - name: slow\n    key: s/*\n    effect: delay\n    delay: 2s\n    count: 3\n"
	w, rules := chaosCall(t, h, http.MethodPut, "application/yaml", yamlRules)
	if w.Code != 200 || len(rules) != 1 || rules[0].Name != "slow" || rules[0].Delay.String() != "2s" || rules[0].Left == nil || *rules[0].Left != 3 {
		t.Fatalf("PUT yaml: %d %q", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), `"delay":"2s"`) {
		t.Errorf("delay not written as a duration: %q", w.Body)
	}
	jsonRules := `{"rules":[{"verbs":["GET"],"effect":"error","error":"busy"},{"effect":"drop","probability":0.5}]}`
	if w, rules := chaosCall(t, h, http.MethodPut, "application/json", jsonRules); w.Code != 200 || len(rules) != 2 || rules[1].Probability == nil || *rules[1].Probability != 0.5 {
		t.Fatalf("PUT json: %d %q", w.Code, w.Body)
	}
	for _, c := range []struct {
		name, method, ctype, body string
		status                    int
		says                      string
	}{
		{"invalid rule", http.MethodPut, "application/json", `{"rules":[{"effect":"drop"},{"effect":"boom"}]}`, 400, `rules[1] ("rule 2"): effect`},
		{"unknown field", http.MethodPut, "application/yaml", "rules:\n  - effect: drop\n    colour: red\n", 400, "colour"},
		{"not yaml", http.MethodPut, "application/yaml", "rules: [", 400, "invalid chaos rules"},
		{"form", http.MethodPut, "application/x-www-form-urlencoded", "rules=", 415, "application/yaml"},
		{"too big", http.MethodPut, "application/json", `{"rules":[{"name":"` + strings.Repeat("x", 70<<10) + `"}]}`, 413, "at most"},
		{"post", http.MethodPost, "application/json", jsonRules, 405, "not allowed"},
	} {
		w, _ := chaosCall(t, h, c.method, c.ctype, c.body)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.name, w.Code, w.Body, c.status, c.says)
		}
	}
	if st := srv.Chaos(); len(st) != 2 {
		t.Fatalf("a refused PUT changed the rules: %+v", st)
	}
	if w, rules := chaosCall(t, h, http.MethodDelete, "", ""); w.Code != 200 || len(rules) != 0 || srv.Chaos() != nil {
		t.Fatalf("DELETE: %d %q", w.Code, w.Body)
	}
}
