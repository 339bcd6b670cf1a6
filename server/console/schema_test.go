package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/examples/thermostat/thermostat"
	"github.com/ssgen/ssgen/runtime"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
	"github.com/ssgen/ssgen/server/schemacheck"
)

// TestKeysDecodedThroughTheSchema: with a schema, a declared key shows
// its declared name, type and value as JSON (or why the value does not
// decode), a declared lock is a lock, and other keys are plain. The
// field names are checked exactly as the page's script reads them:
// decoded into maps, since encoding/json matches struct fields without
// regard to case.
func TestKeysDecodedThroughTheSchema(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	e.put("thermostats/kitchen/reading", "21.5")
	e.put("thermostats/hall/reading", "warm")
	e.put("thermostats/kitchen/owner", "controller-1/0123456789abcdef")
	e.put("other", "x")
	detail := func(key string) (schema, lock map[string]any) {
		t.Helper()
		var d map[string]any
		e.getJSON("/api/key?key="+q(key), &d)
		schema, _ = d["schema"].(map[string]any)
		lock, _ = d["lock"].(map[string]any)
		return schema, lock
	}
	sc, _ := detail("thermostats/kitchen/reading")
	if sc["name"] != "Thermostat.Reading" || sc["json"] != "21.5" || sc["error"] != nil || sc["type"] != "float64 (string)" || sc["guard"] != nil {
		t.Fatalf("reading: %v", sc)
	}
	sc, _ = detail("thermostats/hall/reading")
	if sc["name"] != "Thermostat.Reading" || sc["json"] != nil || sc["error"] == nil {
		t.Fatalf("a reading that does not decode: %v", sc)
	}
	sc, lock := detail("thermostats/kitchen/owner")
	if sc["name"] != "Thermostat.Owner" || sc["lock"] != true || lock == nil || lock["from_value"] != false || lock["holder"] != "controller-1/0123456789abcdef" {
		t.Fatalf("lock: %v %v", sc, lock)
	}
	e.put("thermostats/kitchen/setPoint", "\x82\xa7celsius\xcb\x40\x35\x80\x00\x00\x00\x00\x00\xa4mode\xa4heat")
	sc, _ = detail("thermostats/kitchen/setPoint")
	guard, _ := sc["guard"].(map[string]any)
	if sc["name"] != "Thermostat.SetPoint" || guard["name"] != "Thermostat.Edit" || guard["key"] != "thermostats/kitchen/edit" || guard["ttl_ms"] != 5000.0 {
		t.Fatalf("guarded key: %v", sc)
	}
	if sc, _ = detail("other"); sc != nil {
		t.Fatalf("an undeclared key: %v", sc)
	}
}

// TestKeyListNamesDeclarations: with a schema, /api/keys (and the page
// rendered on the server) name each declared key's declaration.
func TestKeyListNamesDeclarations(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	e.put("thermostats/kitchen/reading", "21.5")
	e.put("thermostats/kitchen/owner", "x")
	e.put("thermostats/Kitchen/reading", "1") // the id fails the pattern
	var page map[string]any
	e.getJSON("/api/keys?flat=1", &page)
	got := map[string]any{}
	for _, it := range page["items"].([]any) {
		m := it.(map[string]any)
		got[m["name"].(string)] = m["declared"]
	}
	want := map[string]any{"thermostats/kitchen/reading": "Thermostat.Reading", "thermostats/kitchen/owner": "Thermostat.Owner", "thermostats/Kitchen/reading": nil}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: declared %v, want %v", k, got[k], v)
		}
	}
	_, body, _ := e.do("GET", "/?prefix="+q("thermostats/kitchen/"), "")
	if !strings.Contains(body, `<span class="declared">Thermostat.Reading</span>`) {
		t.Errorf("the page does not name the declaration:\n%s", body)
	}
}

// TestWritesThroughTheSchema: encoding "schema" takes JSON (or a string
// type's bare text), checks it against the declared type and stores what
// generated code would; a misfit is refused before anything is written.
func TestWritesThroughTheSchema(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	tok := e.csrf()
	set := func(key, value string) (int, string) {
		st, body, _ := e.do("POST", "/api/set", `{"key":"`+q(key)+`","value":`+value+`,"encoding":"schema"}`, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		return st, body
	}
	if st, body := set("thermostats/kitchen/setPoint", `"{\"celsius\": 21.5, \"mode\": \"heat\"}"`); st != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("set point: %d %s", st, body)
	}
	var d struct{ Schema *struct{ JSON string } }
	e.getJSON("/api/key?key="+q("thermostats/kitchen/setPoint"), &d)
	if d.Schema == nil || !strings.Contains(d.Schema.JSON, `"celsius": 21.5`) || !strings.Contains(d.Schema.JSON, `"mode": "heat"`) {
		t.Fatalf("read back: %+v", d.Schema)
	}
	for _, c := range []struct{ key, value, want string }{
		{"thermostats/kitchen/setPoint", `"{\"celsius\": 21.5, \"mode\": \"warm\"}"`, "warm"},
		{"thermostats/kitchen/setPoint", `"{\"celsius\": \"hot\", \"mode\": \"heat\"}"`, "celsius"},
		{"thermostats/kitchen/owner", `"x"`, "lock"},
		{"undeclared", `"1"`, "declares no key"},
	} {
		st, body := set(c.key, c.value)
		if st != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", c.key, c.value, st, body, c.want)
		}
	}
	if _, ok := e.srv.Engine().Lookup([]byte("undeclared")); ok {
		t.Fatal("a refused write stored the key")
	}
}

// TestGuardedWritesTakeTheGuardLock: "guard": true writes a key the
// schema guards the way ssgen set and del do: the console takes the
// guard lock, writes fenced with its token and releases it, so a key
// fenced by its guard's holders is written without a pasted token. A
// lock someone holds refuses the write and names the holder.
func TestGuardedWritesTakeTheGuardLock(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID = "operator-app"
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	th, err := thermostat.New(c).Thermostat("kitchen")
	if err != nil {
		t.Fatal(err)
	}
	// The application writes under the Edit lease: the key is fenced.
	if _, _, err := th.SetPoint().Update(ctx, func(thermostat.SetPoint, bool) (thermostat.SetPoint, error) {
		return thermostat.SetPoint{Celsius: 20, Mode: thermostat.ModeHeat}, nil
	}); err != nil {
		t.Fatal(err)
	}
	tok := e.csrf()
	post := func(path, body string) (int, map[string]any, string) {
		t.Helper()
		st, b, _ := e.do("POST", path, body, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		var m map[string]any
		_ = json.Unmarshal([]byte(b), &m)
		return st, m, b
	}
	key := q("thermostats/kitchen/setPoint")
	value := `"{\"celsius\": 22.5, \"mode\": \"cool\"}"`

	// Unfenced, the store refuses it, as it refuses any client.
	if st, m, b := post("/api/set", `{"key":"`+key+`","value":`+value+`,"encoding":"schema"}`); st != http.StatusOK || m["ok"] != false || !strings.Contains(b, "fencing token is required") {
		t.Fatalf("unfenced: %d %s", st, b)
	}
	// Under the guard lock it is written, and reads back typed.
	if st, m, b := post("/api/set", `{"key":"`+key+`","value":`+value+`,"encoding":"schema","guard":true}`); st != http.StatusOK || m["ok"] != true || m["guard"] != "Thermostat.Edit" {
		t.Fatalf("guarded: %d %s", st, b)
	}
	got, err := th.SetPoint().Get(ctx)
	if err != nil || got.Value != (thermostat.SetPoint{Celsius: 22.5, Mode: thermostat.ModeCool}) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, ok := e.srv.Engine().Lookup([]byte("thermostats/kitchen/edit")); ok {
		t.Fatal("the console kept the guard lock after its write")
	}
	var trace struct {
		Events []struct{ Client, Verb, Key, Result string }
	}
	e.getJSON("/api/trace?client="+q(console.DefaultClientID), &trace)
	var seen []string
	for _, ev := range trace.Events {
		seen = append(seen, ev.Verb+" "+ev.Key+" "+ev.Result)
	}
	want := []string{"SET thermostats/kitchen/edit OK", "SET thermostats/kitchen/setPoint OK", "VDEL thermostats/kitchen/edit 1"}
	if !strings.Contains(strings.Join(seen, "\n"), strings.Join(want, "\n")) {
		t.Fatalf("the console's requests:\n%s\nwant, in order:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}

	// While someone holds the lock, the write is refused and names them.
	lease, ok, err := th.Edit().TryAcquire(ctx)
	if err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	st, m, b := post("/api/set", `{"key":"`+key+`","value":`+value+`,"encoding":"schema","guard":true}`)
	if st != http.StatusOK || m["ok"] != false || !strings.Contains(b, "held by") || !strings.Contains(b, string(lease.Holder())) || !strings.Contains(b, "Thermostat.Edit") {
		t.Fatalf("lock held: %d %s", st, b)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Misuse is refused before anything is sent.
	for _, c := range []struct{ path, body, want string }{
		{"/api/set", `{"key":"` + q("thermostats/kitchen/reading") + `","value":"1","guard":true}`, "no guard lock"},
		{"/api/set", `{"key":"` + key + `","value":` + value + `,"encoding":"schema","guard":true,"fencing_token":"1:0:x"}`, "exclude each other"},
	} {
		if st, _, b := post(c.path, c.body); st != http.StatusBadRequest || !strings.Contains(b, c.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", c.path, c.body, st, b, c.want)
		}
	}

	// A delete under the guard lock.
	if st, m, b := post("/api/delete", `{"key":"`+key+`","guard":true}`); st != http.StatusOK || m["ok"] != true || m["result"] != "1" {
		t.Fatalf("guarded delete: %d %s", st, b)
	}
	if _, err := th.SetPoint().Get(ctx); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("after the guarded delete: %v", err)
	}
}

// TestGuardedWritesFollowTheAuthorizationRules: the console takes a
// guard lock only where its identity may write the lock key, and names
// the lock's holder only where it may read it.
func TestGuardedWritesFollowTheAuthorizationRules(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := server.ParsePolicy([]byte(`
rules:
  - principals: {clientIds: ["ssgen-console"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["thermostats/*/setPoint", "thermostats/*/heater"], method: ReadWrite}
      - {keyType: pattern, keys: ["thermostats/*/edit"], method: Write}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s, Policy: pol}, nil)
	tok := e.csrf()
	post := func(body string) (int, string) {
		st, b, _ := e.do("POST", "/api/set", body, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		return st, b
	}
	// The heater's guard, Owner, is not the console's to write.
	if st, b := post(`{"key":"` + q("thermostats/kitchen/heater") + `","value":"{\"on\": true, \"by\": \"x\"}","encoding":"schema","guard":true}`); st != http.StatusForbidden || !strings.Contains(b, "Thermostat.Owner") {
		t.Fatalf("a guard the console may not write: %d %s", st, b)
	}
	// Edit it may take but not read: a held lock is refused without
	// naming its holder.
	e.put("thermostats/kitchen/edit", "secret-holder/0123456789abcdef")
	st, b := post(`{"key":"` + q("thermostats/kitchen/setPoint") + `","value":"{\"celsius\": 1, \"mode\": \"off\"}","encoding":"schema","guard":true}`)
	if st != http.StatusOK || !strings.Contains(b, `"ok":false`) || !strings.Contains(b, "held by someone else") || strings.Contains(b, "secret-holder") {
		t.Fatalf("a held lock the console may not read: %d %s", st, b)
	}
	if _, ok := e.srv.Engine().Lookup([]byte("thermostats/kitchen/setPoint")); ok {
		t.Fatal("a refused guarded write stored the key")
	}
}

// TestDeclarationOfAKeyNotWrittenYet: /api/declaration says what the
// schema declares a key to be whether or not it exists (the New-key form
// asks it), with the field names the page reads; undeclared keys, keys
// the caller may not read and a console without a schema answer 404.
func TestDeclarationOfAKeyNotWrittenYet(t *testing.T) {
	s, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := server.ParsePolicy([]byte(`
rules:
  - principals: {clientIds: ["ssgen-console"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["thermostats/kitchen/*"], method: ReadWrite}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s, Policy: pol}, nil)
	var d map[string]any
	e.getJSON("/api/declaration?key="+q("thermostats/kitchen/setPoint"), &d)
	guard, _ := d["guard"].(map[string]any)
	if d["name"] != "Thermostat.SetPoint" || d["type"] != "SetPoint (msgpack)" || d["lock"] != nil || guard["name"] != "Thermostat.Edit" || guard["key"] != "thermostats/kitchen/edit" {
		t.Fatalf("set point: %v", d)
	}
	d = nil
	e.getJSON("/api/declaration?key="+q("thermostats/kitchen/owner"), &d)
	if d["name"] != "Thermostat.Owner" || d["lock"] != true {
		t.Fatalf("lock: %v", d)
	}
	for _, key := range []string{"thermostats/kitchen/nothing", "thermostats/hall/setPoint", ""} {
		if st, body, _ := e.do("GET", "/api/declaration?key="+q(key), ""); st != http.StatusNotFound {
			t.Errorf("%q: %d %s, want 404", key, st, body)
		}
	}
	raw := newEnv(t, console.Options{}, nil)
	if st, body, _ := raw.do("GET", "/api/declaration?key="+q("thermostats/kitchen/setPoint"), ""); st != http.StatusNotFound {
		t.Errorf("without a schema: %d %s, want 404", st, body)
	}
}

// TestValuesOfEarlierSchemasDecode: the console reads a value written
// under a field's earlier name through renamed_from, and shows a moved
// key's earlier path as that key's, marked as its earlier key.
func TestValuesOfEarlierSchemasDecode(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(`
version: 1
package: p
encoding: json
types:
  Reading:
    fields:
      celsius: {type: float64, renamed_from: temp}
      unit: {type: string, default: C}
keys:
  Reading: {path: reading, renamed_from: old-reading, type: Reading}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	e.put("reading", `{"temp":20}`)
	e.put("old-reading", `{"temp":19}`)
	for key, want := range map[string][2]string{
		"reading":     {`{"celsius":20,"unit":"C"}`, "Reading (json)"},
		"old-reading": {`{"celsius":19,"unit":"C"}`, "Reading (json; earlier key, renamed_from)"},
	} {
		var d map[string]any
		e.getJSON("/api/key?key="+q(key), &d)
		sc, _ := d["schema"].(map[string]any)
		var got, wantV any
		_ = json.Unmarshal([]byte(want[0]), &wantV)
		if js, ok := sc["json"].(string); ok {
			_ = json.Unmarshal([]byte(js), &got)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(wantV)
		if sc["name"] != "Reading" || string(gb) != string(wb) || sc["type"] != want[1] {
			t.Errorf("%s: %v", key, sc)
		}
	}
}

// TestValuesOfVersionedTypesShowTheirVersion: the console shows a value
// of a versioned type as the version it is stored in, led by its stamp
// "$v" (a value without one is the oldest version), and an edit writes
// the version the stamp names.
func TestValuesOfVersionedTypesShowTheirVersion(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(`
version: 1
package: p
encoding: json
types:
  SetPoint:
    version: 2
    fields: {celsius: float64}
    previous:
      1:
        fields: {fahrenheit: float64}
keys:
  SetPoint: {path: sp, type: SetPoint}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	read := func() string {
		var d struct{ Schema *struct{ JSON string } }
		e.getJSON("/api/key?key=sp", &d)
		if d.Schema == nil {
			t.Fatal("no schema view")
		}
		var v any
		if err := json.Unmarshal([]byte(d.Schema.JSON), &v); err != nil {
			t.Fatalf("%q: %v", d.Schema.JSON, err)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	e.put("sp", `{"fahrenheit":70}`)
	if got := read(); got != `{"$v":1,"fahrenheit":70}` {
		t.Errorf("unstamped value shows as %s", got)
	}
	e.put("sp", `{"$v":2,"celsius":21}`)
	if got := read(); got != `{"$v":2,"celsius":21}` {
		t.Errorf("version 2 value shows as %s", got)
	}
	tok := e.csrf()
	st, body, _ := e.do("POST", "/api/set", `{"key":"sp","value":"{\"$v\": 1, \"fahrenheit\": 50}","encoding":"schema"}`, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
	if st != http.StatusOK {
		t.Fatalf("set of version 1: %d %s", st, body)
	}
	if v, ok := e.srv.Engine().Lookup([]byte("sp")); !ok || string(v.Value) != `{"$v":1,"fahrenheit":50}` {
		t.Errorf("stored %q, %v", v.Value, ok)
	}
}

// TestWritesAreCheckedByTheServersEnforcement: under ssgen serve --schema
// --enforce refuse, the console's writes meet the server's transition
// rules as a client's do: changing an immutable field is refused with the
// schema violation, and the key keeps its value.
func TestWritesAreCheckedByTheServersEnforcement(t *testing.T) {
	s, err := schema.LoadFile("../../internal/tests/e2e/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, func(o *server.Options) {
		o.Enforce, o.WriteCheck, o.TransitionCheck = server.EnforceRefuse, schemacheck.New(s), schemacheck.Transitions(s)
	})
	tok := e.csrf()
	set := func(value string) map[string]any {
		t.Helper()
		st, b, _ := e.do("POST", "/api/set", `{"key":"`+q("thermostats/a/device")+`","value":`+value+`,"encoding":"schema"}`, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		var m map[string]any
		if err := json.Unmarshal([]byte(b), &m); err != nil || st != http.StatusOK {
			t.Fatalf("%d %s", st, b)
		}
		return m
	}
	first := `"{\"serial\": \"A-1\", \"seq\": 5, \"seen\": \"2026-11-27T12:00:00Z\"}"`
	if m := set(first); m["ok"] != true {
		t.Fatalf("first write: %v", m)
	}
	stored, _ := e.srv.Engine().Lookup([]byte("thermostats/a/device"))
	m := set(`"{\"serial\": \"B-2\", \"seq\": 6, \"seen\": \"2026-11-27T12:00:00Z\"}"`)
	if m["ok"] != false || !strings.Contains(fmt.Sprint(m["error"]), `schema violation: Thermostat.Device .serial: immutable field changed from "A-1" to "B-2"`) {
		t.Fatalf("immutable field changed through the console: %v", m)
	}
	if now, _ := e.srv.Engine().Lookup([]byte("thermostats/a/device")); string(now.Value) != string(stored.Value) {
		t.Fatal("the refused write was applied")
	}
}
