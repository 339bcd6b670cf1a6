package console_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
)

// With SchemaFromStore the console reads keys through the schema
// published in its own server under $ssgen/schema, again each time the
// key changes; a value there that is not a published schema (a tampered
// one, an alias bomb) is not used, and /api/session says why.
func TestConsoleReadsThroughTheSchemaInTheStore(t *testing.T) {
	src, err := os.ReadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	published, err := schemastore.Encode("ssgen.yaml", src, time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{SchemaFromStore: true}, nil)
	e.put("thermostats/kitchen/reading", "21.5")
	declared := func() map[string]any {
		t.Helper()
		var d map[string]any
		e.getJSON("/api/key?key="+q("thermostats/kitchen/reading"), &d)
		sc, _ := d["schema"].(map[string]any)
		return sc
	}
	session := func() (bool, string) {
		t.Helper()
		var s map[string]any
		e.getJSON("/api/session", &s)
		msg, _ := s["schema_error"].(string)
		return s["schema"] == true, msg
	}
	if sc := declared(); sc != nil {
		t.Fatalf("nothing published, yet the key is described: %v", sc)
	}
	if has, msg := session(); has || msg != "" {
		t.Fatalf("nothing published: session says schema %v, %q", has, msg)
	}

	e.put(schemastore.Key, string(published))
	if sc := declared(); sc["name"] != "Thermostat.Reading" || sc["json"] != "21.5" {
		t.Fatalf("published: %v", sc)
	}
	if has, msg := session(); !has || msg != "" {
		t.Fatalf("published: session says schema %v, %q", has, msg)
	}

	var env schemastore.Envelope
	if err := json.Unmarshal(published, &env); err != nil {
		t.Fatal(err)
	}
	tampered := env
	tampered.Schema = strings.Replace(env.Schema, "ttl: 30s", "ttl: 1h", 1)
	bomb := "version: 1\npackage: pub\nl0: &l0 [lol, lol, lol, lol]\nl1: [*l0, *l0, *l0, *l0]\n"
	aliases := schemastore.Envelope{Format: 1, Digest: schemastore.Digest([]byte(bomb)), Name: "<script>alert(1)</script>", Published: env.Published, Schema: bomb}
	for _, tt := range []struct {
		name  string
		value any
		want  string
	}{
		{"tampered", tampered, "$ssgen/schema: the schema's digest is"},
		{"alias bomb", aliases, "$ssgen/schema (published 2026-11-27T17:00:00Z):4:"},
		{"not JSON", "version: 1", "$ssgen/schema: not a published schema"},
	} {
		b, _ := json.Marshal(tt.value)
		if s, ok := tt.value.(string); ok {
			b = []byte(s)
		}
		e.put(schemastore.Key, string(b))
		if sc := declared(); sc != nil {
			t.Errorf("%s: the key is described through it: %v", tt.name, sc)
		}
		if has, msg := session(); has || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: session says schema %v, %q; want it to say %q", tt.name, has, msg, tt.want)
		}
	}

	// Published again: used again.
	e.put(schemastore.Key, string(published))
	if sc := declared(); sc["name"] != "Thermostat.Reading" {
		t.Fatalf("published again: %v", sc)
	}
}

func TestConsoleSchemaOptionsExcludeEachOther(t *testing.T) {
	sc, err := schema.LoadFile("../../examples/thermostat/thermostat/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var so server.Options
	if _, err := console.Install(&so, console.Options{Addr: "127.0.0.1:0", Schema: sc, SchemaFromStore: true}); !errors.Is(err, console.ErrInvalidOptions) {
		t.Fatalf("Install with both: %v", err)
	}
}
