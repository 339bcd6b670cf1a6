package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server/console"
)

// TestKeysDecodedThroughTheSchema: with a schema, a declared key shows
// its declared name, type and value as JSON (or why the value does not
// decode), a declared lock is a lock, and other keys are plain.
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
	type detail struct {
		Schema *struct{ Name, Type, JSON, Error string }
		Lock   *struct {
			Holder    string
			FromValue bool `json:"from_value"`
		}
	}
	var d detail
	e.getJSON("/api/key?key="+q("thermostats/kitchen/reading"), &d)
	if d.Schema == nil || d.Schema.Name != "Thermostat.Reading" || d.Schema.JSON != "21.5" || d.Schema.Error != "" || d.Schema.Type == "" {
		t.Fatalf("reading: %+v", d.Schema)
	}
	d = detail{}
	e.getJSON("/api/key?key="+q("thermostats/hall/reading"), &d)
	if d.Schema == nil || d.Schema.JSON != "" || d.Schema.Error == "" {
		t.Fatalf("a reading that does not decode: %+v", d.Schema)
	}
	d = detail{}
	e.getJSON("/api/key?key="+q("thermostats/kitchen/owner"), &d)
	if d.Schema == nil || d.Schema.Name != "Thermostat.Owner" || d.Lock == nil || d.Lock.FromValue || d.Lock.Holder != "controller-1/0123456789abcdef" {
		t.Fatalf("lock: %+v %+v", d.Schema, d.Lock)
	}
	d = detail{}
	e.getJSON("/api/key?key=other", &d)
	if d.Schema != nil {
		t.Fatalf("an undeclared key: %+v", d.Schema)
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
