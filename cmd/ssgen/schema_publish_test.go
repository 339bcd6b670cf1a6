package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

const publishedFile = "testdata/publish/ssgen.yaml"

// runSchemaSub runs ssgen schema SUB against broker url.
func runSchemaSub(t *testing.T, url, sub string, args ...string) cliResult {
	t.Helper()
	return runIn(t, "", nil, append([]string{"schema", sub, "--broker", url}, args...)...)
}

// setRaw stores value under key as bytes, as any client allowed to write
// it can.
func setRaw(t *testing.T, url, key string, value []byte) {
	t.Helper()
	runIn(t, string(value), nil, "set", "--broker", url, "--raw", "--file", "-", key).want(t, exitOK, nil)
}

// publishThenUse publishes the schema and reads and writes keys through
// it with --schema store (and $SSGEN_SCHEMA=store), on url's store.
func publishThenUse(t *testing.T, url string) {
	r := runSchemaSub(t, url, "publish", "--schema", publishedFile)
	r.want(t, exitOK, nil)
	src, err := os.ReadFile(publishedFile)
	if err != nil {
		t.Fatal(err)
	}
	digest := schemastore.Digest(src)
	if !strings.HasPrefix(r.stdout, "published "+publishedFile+" (sha256 "+digest) || !strings.Contains(r.stdout, "2 keys") {
		t.Fatalf("publish printed %q", r.stdout)
	}
	// The same schema again: nothing written.
	r = runSchemaSub(t, url, "publish", "--schema", publishedFile)
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, "nothing written") {
		t.Errorf("publishing the same schema again printed %q", r.stdout)
	}

	run(t, url, "set", "--schema", "store", "rooms/hall/reading", `{"celsius": 21.5, "room": "hall"}`).want(t, exitOK, nil)
	r = run(t, url, "get", "--schema", "store", "rooms/hall/reading", "--json")
	r.want(t, exitOK, nil)
	var got struct {
		Value  map[string]any
		Schema struct{ Name, Type string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json printed %q: %v", r.stdout, err)
	}
	if got.Value["celsius"] != 21.5 || got.Schema.Name != "Room.Reading" || got.Schema.Type != "Reading" {
		t.Errorf("get --schema store --json printed %s", r.stdout)
	}
	// A value that does not fit the published schema is refused before it is sent.
	r = run(t, url, "set", "--schema", "store", "rooms/hall/reading", `{"celsius": "warm"}`)
	r.want(t, exitUsage, nil)
	if !strings.Contains(r.stderr, "Room.Reading") {
		t.Errorf("a misfit value: stderr %q", r.stderr)
	}
	// $SSGEN_SCHEMA=store does the same.
	r = runIn(t, "", map[string]string{schemaEnv: "store"}, "get", "--broker", url, "--quiet", "mode")
	r.want(t, exitNegative, ptr(""))
	runIn(t, "", map[string]string{schemaEnv: "store"}, "set", "--broker", url, "--strict", "mode", "eco").want(t, exitOK, nil)
	r = runIn(t, "", map[string]string{schemaEnv: "store"}, "set", "--broker", url, "--strict", "undeclared", "x")
	r.want(t, exitUsage, nil)
	if !strings.Contains(r.stderr, "not declared by the schema") {
		t.Errorf("--strict with the published schema: %q", r.stderr)
	}
	r = run(t, url, "keys", "--schema", "store", "--json")
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, `"name":"Room.Reading"`) {
		t.Errorf("keys --schema store --json printed %q", r.stdout)
	}
	run(t, url, "del", "--schema", "store", "--strict", "mode").want(t, exitOK, nil)

	// show: the YAML after two comment lines, -o the exact bytes, --json the facts.
	r = runSchemaSub(t, url, "show")
	r.want(t, exitOK, nil)
	if !strings.HasPrefix(r.stdout, `# $ssgen/schema: "ssgen.yaml", sha256 `+digest+", published ") || !strings.HasSuffix(r.stdout, string(src)) {
		t.Errorf("show printed %q", r.stdout)
	}
	out := filepath.Join(t.TempDir(), "copy.yaml")
	runSchemaSub(t, url, "show", "-o", out).want(t, exitOK, ptr(""))
	if b, _ := os.ReadFile(out); !bytes.Equal(b, src) {
		t.Errorf("show -o wrote %q, want the published file's bytes", b)
	}
	r = runSchemaSub(t, url, "show", "--json")
	r.want(t, exitOK, nil)
	var facts map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &facts); err != nil || facts["digest"] != digest || facts["keys"] != 2.0 || facts["name"] != "ssgen.yaml" {
		t.Errorf("show --json printed %q (%v)", r.stdout, err)
	}
	if _, err := time.Parse(time.RFC3339, facts["published"].(string)); err != nil {
		t.Errorf("published %v: %v", facts["published"], err)
	}
}

func TestSchemaPublishAndUseItFromTheStore(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) { publishThenUse(t, st.url(t)) })
	}
}

// serve --ui --schema store: the console reads keys through the schema
// published in the server itself, once it is published.
func TestServeConsoleReadsTheSchemaInTheStore(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { serveConsoleFromStore(t, "--listen", "127.0.0.1:0") })
	// ssgen serve --broker attached to mosquitto: the shell verbs and the
	// console use the schema published through mosquitto.
	t.Run("mosquitto", func(t *testing.T) { serveConsoleFromStore(t, "--broker", brokertest.Mosquitto(t)) })
}

func serveConsoleFromStore(t *testing.T, where ...string) {
	sp := backgroundServe(t, append(append([]string{"serve"}, where...), "--ui", "--schema", "store")...)
	var mqttURL, consoleURL string
	for _, p := range []*string{&mqttURL, &consoleURL} {
		if !sp.lines.Scan() {
			t.Fatalf("serve printed too little; stderr:\n%s", sp.stderr)
		}
		*p = sp.lines.Text()
	}
	go func() { _, _ = io.Copy(io.Discard, sp.out) }()
	if s := sp.stderr.String(); !strings.Contains(s, "console: the schema published in this server under $ssgen/schema") {
		t.Errorf("the log does not say where the console's schema comes from:\n%s", s)
	}
	run(t, mqttURL, "set", "--raw", "rooms/hall/reading", `{"celsius":19,"room":"hall"}`).want(t, exitOK, nil)
	detail := func() (name, value string) {
		t.Helper()
		resp, err := http.Get(consoleURL + "api/key?key=rooms%2Fhall%2Freading")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d struct {
			Schema *struct{ Name, JSON string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Schema == nil {
			return "", ""
		}
		return d.Schema.Name, d.Schema.JSON
	}
	if name, _ := detail(); name != "" {
		t.Fatalf("nothing published, yet the console declares the key %q", name)
	}
	runSchemaSub(t, mqttURL, "publish", "--schema", publishedFile).want(t, exitOK, nil)
	if name, value := detail(); name != "Room.Reading" || !strings.Contains(value, `"celsius": 19`) {
		t.Fatalf("published: the console shows %q %q", name, value)
	}
	run(t, mqttURL, "get", "--schema", "store", "--quiet", "rooms/hall/reading").want(t, exitOK, ptr("{\n  \"celsius\": 19,\n  \"room\": \"hall\"\n}\n"))
}

// `ssgen schema` and `ssgen schema -o FILE` still print the JSON Schema.
func TestSchemaVerbStillPrintsTheJSONSchema(t *testing.T) {
	r := runIn(t, "", nil, "schema")
	r.want(t, exitOK, nil)
	if !json.Valid([]byte(r.stdout)) || !strings.Contains(r.stdout, "2020-12") {
		t.Fatalf("ssgen schema printed %.200q", r.stdout)
	}
	out := filepath.Join(t.TempDir(), "s.json")
	runIn(t, "", nil, "schema", "-o", out).want(t, exitOK, ptr(""))
	if b, _ := os.ReadFile(out); !bytes.Equal(b, []byte(r.stdout)) {
		t.Errorf("ssgen schema -o wrote other bytes")
	}
}

// A schema with problems, one over the bound or one with YAML aliases
// (the billion laughs) is not published: nothing is sent.
func TestSchemaPublishRefusesBadSchemas(t *testing.T) {
	url := servertest.New(t).URL()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bomb := "version: 1\npackage: pub\nl0: &l0 [lol, lol, lol, lol]\nl1: &l1 [*l0, *l0, *l0, *l0]\nl2: [*l1, *l1, *l1, *l1]\n"
	tests := []struct{ name, text, want string }{
		{"errors.yaml", "version: 1\npackage: pub\nkeys:\n  Bad: {path: x, type: nosuch}\n", "errors.yaml:4:"},
		{"big.yaml", "version: 1\npackage: pub\n" + strings.Repeat("# padding\n", schemastore.MaxSchemaBytes/10+1), "more than 1048576 bytes"},
		{"bomb.yaml", bomb, "bomb.yaml:4:"},
		{"binary.yaml", "version: 1\npackage: pub\n# \xff\n", "UTF-8"},
	}
	for _, tt := range tests {
		r := runSchemaSub(t, url, "publish", "--schema", write(tt.name, tt.text))
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %.300q; want exit 2 saying %q", tt.name, r.code, r.stderr, tt.want)
		}
	}
	run(t, url, "get", "--raw", schemastore.Key).want(t, exitNegative, ptr(""))
	// Nothing published: --schema store fails, show answers no.
	r := run(t, url, "get", "--schema", "store", "mode")
	r.want(t, exitUsage, nil)
	if !strings.Contains(r.stderr, "no schema is published under $ssgen/schema") {
		t.Errorf("--schema store with none published: %q", r.stderr)
	}
	runSchemaSub(t, url, "show").want(t, exitNegative, ptr(""))
}

// Any client allowed to write $ssgen/schema can store anything there:
// each such value is refused by --schema store and show with an error
// naming the key, and nothing a terminal acts on reaches it.
func TestSchemaFromTheStoreRefusesTamperedValues(t *testing.T) {
	for _, st := range bothStores {
		t.Run(st.name, func(t *testing.T) { refuseTampered(t, st.url(t)) })
	}
}

func refuseTampered(t *testing.T, url string) {
	src, err := os.ReadFile(publishedFile)
	if err != nil {
		t.Fatal(err)
	}
	envelope := func(schemaText string, edit func(*schemastore.Envelope)) []byte {
		e := schemastore.Envelope{Format: 1, Digest: schemastore.Digest([]byte(schemaText)), Name: "ssgen.yaml", Published: "2026-11-27T17:00:00Z", Schema: schemaText}
		if edit != nil {
			edit(&e)
		}
		b, _ := json.Marshal(e)
		return b
	}
	bomb := "version: 1\npackage: pub\nl0: &l0 [lol, lol, lol, lol]\nl1: &l1 [*l0, *l0, *l0, *l0]\n"
	tests := []struct {
		name  string
		value []byte
		want  string
	}{
		{"not an envelope", []byte("version: 1\npackage: pub\n"), "$ssgen/schema: not a published schema"},
		{"malformed JSON", []byte(`{"format":1,"digest":"`), "$ssgen/schema: not a published schema"},
		{"tampered", envelope(string(src), func(e *schemastore.Envelope) { e.Schema += "  Extra: {path: x, type: string}\n" }), "$ssgen/schema: the schema's digest is"},
		{"oversize", append(envelope(string(src), nil), bytes.Repeat([]byte(" "), schemastore.MaxEnvelopeBytes)...), "$ssgen/schema: the value is"},
		{"alias bomb", envelope(bomb, nil), "$ssgen/schema (published 2026-11-27T17:00:00Z):4:"},
		{"escape in a message", envelope("version: 1\npackage: pub\n\x1b[2J: 1\n", nil), "$ssgen/schema (published 2026-11-27T17:00:00Z):3:1:"},
		{"escape in the name", envelope(string(src), func(e *schemastore.Envelope) { e.Published = "\x1b]0;owned\x07" }), "not RFC 3339"},
	}
	for _, tt := range tests {
		setRaw(t, url, schemastore.Key, tt.value)
		for _, args := range [][]string{{"get", "--broker", url, "--schema", "store", "mode"}, {"schema", "show", "--broker", url}} {
			r := runIn(t, "", nil, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("%s: ssgen %s: exit %d, stdout %q, stderr %.400q; want exit 2 saying %q", tt.name, args[0], r.code, r.stdout, r.stderr, tt.want)
			}
			if strings.ContainsAny(r.stderr, "\x1b\x07") {
				t.Errorf("%s: ssgen %s printed a terminal control: %q", tt.name, args[0], r.stderr)
			}
			if strings.Count(r.stderr, "\n") > 25 {
				t.Errorf("%s: ssgen %s printed %d lines", tt.name, args[0], strings.Count(r.stderr, "\n"))
			}
		}
	}
	// YAML refuses control characters, but not a bidirectional control:
	// one in a schema that loads is shown escaped, and -o writes its bytes.
	text := string(src) + "# \u202eevil\n"
	setRaw(t, url, schemastore.Key, envelope(text, nil))
	r := runSchemaSub(t, url, "show")
	r.want(t, exitOK, nil)
	if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") || strings.Count(r.stdout, "\n") != strings.Count(text, "\n")+2 {
		t.Errorf("show printed %q", r.stdout)
	}
	out := filepath.Join(t.TempDir(), "s.yaml")
	runSchemaSub(t, url, "show", "-o", out).want(t, exitOK, ptr(""))
	if b, _ := os.ReadFile(out); string(b) != text {
		t.Errorf("show -o wrote %q", b)
	}
}

// serve --enforce wants a file: a schema from the store would let any
// writer of the key choose the checks. The console may read it.
func TestServeEnforceRefusesTheSchemaFromTheStore(t *testing.T) {
	r := runIn(t, "", nil, "serve", "--listen", "127.0.0.1:0", "--enforce", "refuse", "--schema", "store")
	r.want(t, exitUsage, nil)
	if !strings.Contains(r.stderr, "any client allowed to write $ssgen/schema") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// The rules docs/security.md suggests: the deployer may write
// $ssgen/schema, a client of the data may only read it. The reader's
// publish is refused; it reads and writes its keys through the schema the
// deployer published.
func TestSchemaInTheStoreUnderAuthorizationRules(t *testing.T) {
	pol, err := server.ParsePolicy([]byte(`rules:
  - principals: {clientIds: ["deployer"]}
    stateStoreResources:
      - {keyType: string, keys: ["$ssgen/schema"], method: ReadWrite}
  - principals: {clientIds: ["reader"]}
    stateStoreResources:
      - {keyType: string, keys: ["$ssgen/schema"], method: Read}
      - {keyType: pattern, keys: ["rooms/*"], method: ReadWrite}
`))
	if err != nil {
		t.Fatal(err)
	}
	url := servertest.New(t, servertest.WithOptions(func(so *server.Options) {
		so.Security = server.Security{AllowAnonymous: true, Authorization: pol}
	})).URL()
	r := runSchemaSub(t, url, "publish", "--client-id", "reader", "--schema", publishedFile)
	r.want(t, exitUsage, nil)
	if !strings.Contains(r.stderr, "not authorized") {
		t.Errorf("the reader's publish: %q", r.stderr)
	}
	runSchemaSub(t, url, "publish", "--client-id", "deployer", "--schema", publishedFile).want(t, exitOK, nil)
	run(t, url, "set", "--client-id", "reader", "--schema", "store", "rooms/hall/reading", `{"celsius": 18, "room": "hall"}`).want(t, exitOK, nil)
	run(t, url, "get", "--client-id", "reader", "--schema", "store", "--quiet", "rooms/hall/reading").want(t, exitOK, ptr("{\n  \"celsius\": 18,\n  \"room\": \"hall\"\n}\n"))
}

// Code is generated from files only: generate and check take --schema
// store for a file named store, and never read the store.
func TestGenerateNeverReadsTheSchemaInTheStore(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, verb := range []string{"generate", "check"} {
		r := runIn(t, "", map[string]string{schemaEnv: "store", brokerEnv: "127.0.0.1:1"}, verb, "--schema", "store")
		if r.code != exitUsage || !strings.Contains(r.stderr, "store: no such file") {
			t.Errorf("%s --schema store: exit %d, stderr %q", verb, r.code, r.stderr)
		}
	}
}
