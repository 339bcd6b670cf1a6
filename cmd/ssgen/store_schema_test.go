package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/internal/testkit/kinds"
	"github.com/ssgen/ssgen/internal/testkit/kinds/units"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/servertest"
)

// kindsFile is the schema of the generated fixture package kinds: every
// value kind in every encoding that holds it.
var kindsFile = filepath.Join("..", "..", "internal", "testkit", "kinds", "ssgen.yaml")

// typedStore starts a store and returns its URL and a client of the
// generated kinds package on it.
func typedStore(t *testing.T, opts ...servertest.Option) (*kinds.Store, string, *engine.Engine) {
	t.Helper()
	srv := servertest.New(t, opts...)
	cfg, err := runtime.FromURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := runtime.Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return kinds.New(c), srv.URL(), srv.Engine()
}

// runTyped runs a verb against url with the kinds schema.
func runTyped(t *testing.T, url string, args ...string) cliResult {
	t.Helper()
	return run(t, url, append([]string{args[0], "--schema", kindsFile}, args[1:]...)...)
}

// cliCase is one key of the generated package with values to move both
// ways between the generated code and the shell verbs.
type cliCase interface {
	check(t *testing.T, url string, s *schema.Schema)
}

type cliKey[T any] struct {
	key    *runtime.Key[T]
	values []T
}

// check writes each value with ssgen set (from its JSON) and reads it with
// the generated code, then writes it with the generated code and reads it
// with ssgen get --json: both must see the value.
func (k cliKey[T]) check(t *testing.T, url string, s *schema.Schema) {
	t.Helper()
	ctx := context.Background()
	r := schemaval.NewResolver(s)
	m, ok := r.Resolve(k.key.Name())
	if !ok {
		t.Fatalf("%s is not declared", k.key.Name())
	}
	for i, want := range k.values {
		b, err := k.key.Codec().Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		view, err := m.Codec().Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(view)

		// ssgen set -> generated Get.
		runTyped(t, url, "set", k.key.Name(), "--", string(js)).want(t, exitOK, nil)
		got, err := k.key.Get(ctx)
		if err != nil {
			t.Fatalf("value %d (%s): generated Get after ssgen set: %v", i, js, err)
		}
		if gb, _ := k.key.Codec().Encode(got.Value); string(gb) != string(b) {
			t.Errorf("value %d: ssgen set %s, generated code read %#v, want %#v", i, js, got.Value, want)
		}

		// generated Set -> ssgen get --json.
		if _, err := k.key.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := k.key.Set(ctx, want); err != nil {
			t.Fatal(err)
		}
		res := runTyped(t, url, "get", k.key.Name(), "--json")
		res.want(t, exitOK, nil)
		var env struct {
			Value  json.RawMessage `json:"value"`
			Schema struct{ Name string }
		}
		if err := json.Unmarshal([]byte(res.stdout), &env); err != nil {
			t.Fatalf("get --json printed %q: %v", res.stdout, err)
		}
		if string(env.Value) != string(js) || env.Schema.Name != m.Name() {
			t.Errorf("value %d: get --json printed %s of %s, want %s of %s", i, env.Value, env.Schema.Name, js, m.Name())
		}
	}
}

// TestShellVerbsRoundTripWithGeneratedCode moves a value of every kind the
// schema allows, in every encoding that holds it, from ssgen set to the
// generated code and from the generated code to ssgen get.
func TestShellVerbsRoundTripWithGeneratedCode(t *testing.T) {
	s, url, _ := typedStore(t)
	sc, err := schema.LoadFile(kindsFile)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 2, 17, 56, 123456789, time.UTC)
	every := kinds.Everything{
		B: true, I: -1 << 40, I8: -128, I16: 32767, I32: -5, I64: -1 << 63,
		U: 1 << 63, U8: 255, U16: 1, U32: 1 << 31, U64: 1<<64 - 1,
		F32: 0.1, F64: -2.5e-300, S: "two words <&>", Raw: []byte{0, 0xff},
		At: at, Every: 90 * time.Second, Mode: kinds.ModeTwoWords,
		Modes: []kinds.Mode{kinds.ModeCool}, List: []string{"x"}, Grid: [][]int{{1}, nil},
		Table: map[string]int64{"b": 2, "a": 1}, Nested: map[string][]kinds.Inner{"k": {{Name: "n", Weight: 0.5}}},
		Inner: kinds.Inner{Name: "in"}, MaybeAt: &at, MaybeMode: kinds.ModeOff,
		Parent: &kinds.Everything{Mode: kinds.ModeHeat},
	}
	zone, err := s.Zone(3, kinds.ModeCool)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]cliCase{
		"struct msgpack":     cliKey[kinds.Everything]{s.Packed(), []kinds.Everything{every}},
		"struct json":        cliKey[kinds.Everything]{s.JSON(), []kinds.Everything{every}},
		"struct in order":    cliKey[kinds.Plain]{s.Plain(), []kinds.Plain{{Zeta: 9, Alpha: "a", When: &at}}},
		"list":               cliKey[[]kinds.Inner]{s.List(), [][]kinds.Inner{{{Name: "a"}, {Name: "b", Weight: 2}}}},
		"map":                cliKey[map[string]kinds.Inner]{s.Map(), []map[string]kinds.Inner{{"x": {Name: "y"}}}},
		"enum msgpack":       cliKey[kinds.Mode]{s.Enum(), []kinds.Mode{kinds.ModeTwoWords}},
		"enum json":          cliKey[kinds.Mode]{s.EnumJSON(), []kinds.Mode{kinds.ModeCool}},
		"enum string":        cliKey[kinds.Mode]{s.EnumText(), []kinds.Mode{kinds.ModeHeat}},
		"bool":               cliKey[bool]{s.Bool(), []bool{true}},
		"int":                cliKey[int]{s.Int(), []int{-7}},
		"int8":               cliKey[int8]{s.Int8(), []int8{-128}},
		"uint64":             cliKey[uint64]{s.Uint64(), []uint64{1<<64 - 1}},
		"float32":            cliKey[float32]{s.Float32(), []float32{0.1}},
		"float64":            cliKey[float64]{s.Float64(), []float64{21.5}},
		"string":             cliKey[string]{s.Str(), []string{"two words"}},
		"time":               cliKey[time.Time]{s.Time(), []time.Time{at}},
		"duration":           cliKey[time.Duration]{s.Duration(), []time.Duration{1500 * time.Millisecond}},
		"bytes":              cliKey[[]byte]{s.Raw(), [][]byte{{0, 1, 0xff}}},
		"msgpack int":        cliKey[int64]{s.PackedInt(), []int64{1 << 40}},
		"msgpack time":       cliKey[time.Time]{s.PackedTime(), []time.Time{at}},
		"msgpack duration":   cliKey[time.Duration]{s.PackedDuration(), []time.Duration{time.Hour}},
		"msgpack bytes":      cliKey[[]byte]{s.PackedBytes(), [][]byte{{9}}},
		"json time":          cliKey[time.Time]{s.JSONTime(), []time.Time{at}},
		"go_type text":       cliKey[units.Celsius]{s.CelsiusText(), []units.Celsius{21.5}},
		"go_type json":       cliKey[units.Celsius]{s.CelsiusJSON(), []units.Celsius{-40}},
		"go_type in struct":  cliKey[kinds.Reading]{s.ReadingJSON(), []kinds.Reading{{Temp: 20, Previous: ptrTo(units.Celsius(19))}}},
		"group parameters":   cliKey[string]{zone.Name(), []string{"east"}},
		"integer parameters": cliKey[int8]{mustOffset(t, zone), []int8{-3}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { c.check(t, url, sc) })
	}
}

func ptrTo[T any](v T) *T { return &v }

func mustOffset(t *testing.T, z *kinds.Zone) *runtime.Key[int8] {
	t.Helper()
	return z.Offset(-1)
}

func TestSchemaGetPrintsTextJSONAndFacts(t *testing.T) {
	s, url, _ := typedStore(t)
	ctx := context.Background()
	th, err := s.Thermostat("kitchen")
	if err != nil {
		t.Fatal(err)
	}
	ver, err := th.Reading().Set(ctx, 21.5)
	if err != nil {
		t.Fatal(err)
	}
	r := runTyped(t, url, "get", "thermostats/kitchen/reading")
	r.want(t, exitOK, ptr("21.5\n"))
	for _, want := range []string{"Thermostat.Reading (float64, string) id=kitchen", "version " + ver.String(), "ttl 30s: expires by "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	runTyped(t, url, "get", "thermostats/kitchen/reading", "--quiet").want(t, exitOK, ptr("21.5\n"))
	if r := runTyped(t, url, "get", "thermostats/kitchen/reading", "--quiet"); r.stderr != "" {
		t.Errorf("--quiet printed %q", r.stderr)
	}

	r = runTyped(t, url, "get", "thermostats/kitchen/reading", "--json")
	r.want(t, exitOK, nil)
	var got struct {
		Key, Version, Written, TTL, Expires string
		Value                               float64
		Schema                              schemaInfo
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json printed %q: %v", r.stdout, err)
	}
	written := ver.Time().UTC()
	if got.Key != "thermostats/kitchen/reading" || got.Value != 21.5 || got.Version != ver.String() ||
		got.Written != written.Format(time.RFC3339Nano) || got.TTL != "30s" ||
		got.Expires != written.Add(30*time.Second).Format(time.RFC3339Nano) {
		t.Errorf("--json printed %s", r.stdout)
	}
	if got.Schema.Name != "Thermostat.Reading" || got.Schema.Kind != "key" || got.Schema.Params["id"] != "kitchen" ||
		got.Schema.Type != "float64" || got.Schema.Encoding != "string" {
		t.Errorf("--json schema %+v", got.Schema)
	}

	// A composite prints as indented JSON; --raw prints the stored bytes.
	if _, err := s.Plain().Set(ctx, kinds.Plain{Zeta: 1, Alpha: "a"}); err != nil {
		t.Fatal(err)
	}
	runTyped(t, url, "get", "v/plain").want(t, exitOK, ptr("{\n  \"zeta\": 1,\n  \"alpha\": \"a\"\n}\n"))
	runTyped(t, url, "get", "v/plain", "--raw").want(t, exitOK, ptr("\x82\xa4zeta\x01\xa5alpha\xa1a\n"))
	runTyped(t, url, "get", "v/plain", "--hex").want(t, exitOK, ptr("82a47a65746101a5616c706861a161\n"))

	// A lock prints its holder; --json names it a lock with its lease TTL.
	lease, err := th.Owner().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	r = runTyped(t, url, "get", "thermostats/kitchen/owner", "--json")
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, `"value":"`+string(lease.Holder())+`"`) || !strings.Contains(r.stdout, `"kind":"lock"`) || !strings.Contains(r.stdout, `"ttl":"10s"`) {
		t.Errorf("get --json of a lock printed %s", r.stdout)
	}

	// An undeclared key is bytes, as without a schema.
	run(t, url, "set", "not/declared", "x y").want(t, exitOK, nil)
	r = runTyped(t, url, "get", "not/declared")
	r.want(t, exitOK, ptr("x y\n"))
	if r.stderr != "" {
		t.Errorf("undeclared key: stderr %q", r.stderr)
	}
	runTyped(t, url, "get", "not/declared", "--json").want(t, exitOK, nil)
}

func TestSchemaGetRefusesAValueThatDoesNotDecode(t *testing.T) {
	_, url, _ := typedStore(t)
	run(t, url, "set", "s/enum", "warm").want(t, exitOK, nil) // no schema: bytes
	r := runTyped(t, url, "get", "s/enum")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, `stored value does not fit EnumText (Mode, string): "warm" is not a Mode`) || !strings.Contains(r.stderr, "--raw") {
		t.Errorf("stderr %q", r.stderr)
	}
	// --json still shows the bytes, and why they do not decode.
	r = runTyped(t, url, "get", "s/enum", "--json")
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, `"value":"warm"`) || !strings.Contains(r.stdout, `"decodeError":"\"warm\" is not a Mode`) {
		t.Errorf("--json printed %s", r.stdout)
	}
	runTyped(t, url, "get", "s/enum", "--raw").want(t, exitOK, ptr("warm\n"))
}

func TestSchemaSetRefusesAMisfitBeforeSending(t *testing.T) {
	_, url, eng := typedStore(t)
	tests := []struct {
		key, value, want string
	}{
		{"v/plain", `{"zeta":1}`, `"v/plain" is Plain (Plain, msgpack): Plain: required field "alpha" is missing (nothing was sent)`},
		{"v/plain", `{"zeta":1,"alpha":"a","alfa":1}`, `.alfa: Plain has no such field (did you mean "alpha"?)`},
		{"s/enum", `warm`, `"warm" is not a Mode (want one of "heat", "cool", "off", "two words")`},
		{"s/int8", `300`, `want a int8 (-128..127), got the number 300`},
		{"v/msgpack", `{"mode":"heat"`, `not JSON: it ends too early`},
		{"thermostats/kitchen/owner", `x`, `is the lock Thermostat.Owner: take it with ssgen lock`},
	}
	for _, tt := range tests {
		r := runTyped(t, url, "set", tt.key, tt.value)
		r.want(t, exitUsage, ptr(""))
		if !strings.Contains(r.stderr, tt.want) {
			t.Errorf("set %s %s: stderr %q, want %q", tt.key, tt.value, r.stderr, tt.want)
		}
		if _, ok := eng.Lookup([]byte(tt.key)); ok {
			t.Errorf("set %s %s stored something", tt.key, tt.value)
		}
	}
	// Nothing is sent: the broker is not even dialled.
	r := runIn(t, "", nil, "set", "--schema", kindsFile, "--broker", "mqtt://127.0.0.1:1", "s/enum", "warm")
	r.want(t, exitUsage, ptr(""))
	if strings.Contains(r.stderr, "connect") {
		t.Errorf("stderr %q: it dialled", r.stderr)
	}
	// --raw writes the bytes regardless.
	runTyped(t, url, "set", "s/enum", "warm", "--raw").want(t, exitOK, nil)
}

func TestSchemaSetAppliesTheDeclaredTTLAndPersist(t *testing.T) {
	dir := t.TempDir()
	_, url, eng := typedStore(t, servertest.WithOptions(func(o *server.Options) { o.DataDir = dir }))
	runTyped(t, url, "set", "thermostats/k/reading", "21.5").want(t, exitOK, nil)
	e, ok := eng.Lookup([]byte("thermostats/k/reading"))
	if !ok || e.Deadline.IsZero() || string(e.Value) != "21.5" {
		t.Fatalf("stored %+v, want 21.5 with the declared 30s TTL", e)
	}
	runTyped(t, url, "set", "p/durable", "kept").want(t, exitOK, nil)
	runTyped(t, url, "set", "s/string", "volatile").want(t, exitOK, nil)
	durable := map[string]bool{}
	for _, it := range eng.Export(nil).Items {
		durable[it.Key] = it.Persist
	}
	if !durable["p/durable"] || durable["s/string"] {
		t.Errorf("durable keys %v, want p/durable only (persist: true)", durable)
	}
}

func TestSchemaSetWritesAGuardedKeyUnderItsLease(t *testing.T) {
	s, url, eng := typedStore(t)
	ctx := context.Background()
	th, err := s.Thermostat("kitchen")
	if err != nil {
		t.Fatal(err)
	}
	value := `{"mode":"heat","inner":{"name":"x"},"b":false,"i":0,"i8":0,"i16":0,"i32":0,"i64":0,"u":0,"u8":0,"u16":0,"u32":0,"u64":0,"f32":0,"f64":21.5,"s":"","at":"2026-01-01T00:00:00Z","every":"0s"}`

	// Free lock: ssgen takes it, writes with its token and lets it go.
	runTyped(t, url, "set", "thermostats/kitchen/setPoint", value).want(t, exitOK, nil)
	e, ok := eng.Lookup([]byte("thermostats/kitchen/setPoint"))
	if !ok || e.FencingToken.IsZero() {
		t.Fatalf("stored %+v, want a fenced write", e)
	}
	if _, ok := eng.Lookup([]byte("thermostats/kitchen/owner")); ok {
		t.Error("the guard lock was not released")
	}
	// An unfenced write is now refused, as for every guarded key.
	if _, err := th.SetPoint().Set(ctx, kinds.Everything{Mode: kinds.ModeCool}); !errors.Is(err, runtime.ErrFencingTokenRequired) {
		t.Fatalf("unfenced generated Set: %v", err)
	}

	// Held by the application: exit 1 naming the lock, the holder and
	// what to do.
	lease, err := th.Owner().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := runTyped(t, url, "set", "thermostats/kitchen/setPoint", value)
	r.want(t, exitNegative, ptr(""))
	for _, want := range []string{"guarded by lock Thermostat.Owner", string(lease.Holder()), "--wait", "--fencing-token"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	// With the holder's token it goes through.
	runTyped(t, url, "set", "thermostats/kitchen/setPoint", value, "--fencing-token", lease.Token().String()).want(t, exitOK, nil)
	if e, _ := eng.Lookup([]byte("thermostats/kitchen/setPoint")); e.FencingToken != lease.Token() {
		t.Errorf("fencing token %s, want the holder's %s", e.FencingToken, lease.Token())
	}
	// --wait waits for the holder to let go.
	go func() {
		time.Sleep(200 * time.Millisecond)
		lease.Release(ctx)
	}()
	r = runTyped(t, url, "set", "thermostats/kitchen/setPoint", value, "--wait", "15s")
	r.want(t, exitOK, nil)
	newTok, _ := hlc.Parse(strings.TrimSpace(r.stdout))
	if e, _ := eng.Lookup([]byte("thermostats/kitchen/setPoint")); e.FencingToken.Compare(lease.Token()) <= 0 || e.Version != newTok {
		t.Errorf("after --wait: stored %+v, want a newer token than %s", e, lease.Token())
	}
}

func TestSchemaWatchDecodes(t *testing.T) {
	s, url, _ := typedStore(t)
	ctx := context.Background()
	out, stop := startWatch(t, url, "--schema", kindsFile, "v/plain", "s/enum")
	until(t, out, `SET v/plain {"zeta":2,"alpha":"two\u0020words"} `, func() {
		if _, err := s.Plain().Set(ctx, kinds.Plain{Zeta: 2, Alpha: "two words"}); err != nil {
			t.Fatal(err)
		}
	})
	until(t, out, "SET s/enum heat ", func() {
		if _, err := s.EnumText().Set(ctx, kinds.ModeHeat); err != nil {
			t.Fatal(err)
		}
	})
	// A value that does not decode: bytes on stdout, the reason on stderr.
	until(t, out, "SET s/enum warm ", func() { run(t, url, "set", "s/enum", "warm").want(t, exitOK, nil) })
	r := stop()
	if r.code != exitOK || !strings.Contains(r.stderr, `s/enum: value does not fit EnumText (Mode, string): "warm" is not a Mode`) {
		t.Errorf("watch ended %d, stderr %q", r.code, r.stderr)
	}

	out, stop = startWatch(t, url, "--schema", kindsFile, "--json", "thermostats/k/reading")
	until(t, out, `"value":21.5`, func() { runTyped(t, url, "set", "thermostats/k/reading", "21.5").want(t, exitOK, nil) })
	stop()
	var ev map[string]any
	line := strings.SplitN(out.String(), "\n", 2)[0]
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("--json line %q: %v", line, err)
	}
	if ev["event"] != "set" || ev["key"] != "thermostats/k/reading" || ev["ttl"] != "30s" || ev["expires"] == nil ||
		ev["schema"].(map[string]any)["name"] != "Thermostat.Reading" {
		t.Errorf("--json line %s", line)
	}
}

func TestSchemaKeysNamesDeclarations(t *testing.T) {
	_, url, eng := typedStore(t)
	for _, k := range []string{"thermostats/k1/setPoint", "zones/3/two words/name", "thermostats/K1/setPoint", "other"} {
		if err := eng.Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := runTyped(t, url, "keys")
	r.want(t, exitOK, nil)
	for _, want := range []string{"thermostats/k1/setPoint Thermostat.SetPoint\n", "\"zones/3/two words/name\" Zone.Name\n", "thermostats/K1/setPoint\n", "other\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("keys printed %q, without %q", r.stdout, want)
		}
	}
	r = runTyped(t, url, "keys", "zones/*", "--json")
	r.want(t, exitOK, ptr(`{"key":"zones/3/two words/name","schema":{"name":"Zone.Name","kind":"key","params":{"mode":"two words","n":3},"type":"string","encoding":"string"}}`+"\n"))
	runTyped(t, url, "keys", "other", "--raw").want(t, exitOK, ptr("other\n"))
}

func TestSchemaIsFoundInTheEnvironmentAndTheCurrentDirectory(t *testing.T) {
	s, url, _ := typedStore(t)
	if _, err := s.EnumText().Set(context.Background(), kinds.ModeCool); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(kindsFile)
	if err != nil {
		t.Fatal(err)
	}
	// $SSGEN_SCHEMA.
	r := runIn(t, "", map[string]string{"SSGEN_SCHEMA": abs}, "get", "--broker", url, "s/enum", "--json")
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, `"name":"EnumText"`) {
		t.Errorf("with SSGEN_SCHEMA: %s", r.stdout)
	}
	// ./ssgen.yaml.
	dir := t.TempDir()
	data, _ := os.ReadFile(abs)
	writeTestFile(t, filepath.Join(dir, "ssgen.yaml"), data)
	t.Chdir(dir)
	r = run(t, url, "get", "s/enum", "--json")
	r.want(t, exitOK, nil)
	if !strings.Contains(r.stdout, `"name":"EnumText"`) {
		t.Errorf("with ./ssgen.yaml: %s", r.stdout)
	}
	// --raw ignores it.
	if r := run(t, url, "get", "s/enum", "--raw", "--json"); strings.Contains(r.stdout, "schema") {
		t.Errorf("--raw: %s", r.stdout)
	}
	// A broken ./ssgen.yaml is reported, with the way around it.
	writeTestFile(t, filepath.Join(dir, "ssgen.yaml"), []byte("version: 1\npackage: x\nkeys:\n  A: {path: a, type: nope}\n"))
	r = run(t, url, "get", "s/enum")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown type "nope"`) || !strings.Contains(r.stderr, "--raw ignores it") {
		t.Errorf("broken ./ssgen.yaml: %d %q", r.code, r.stderr)
	}
}

func TestSchemaDelAndVdel(t *testing.T) {
	s, url, eng := typedStore(t)
	ctx := context.Background()
	// vdel compares the encoded value: "heat" is stored as the text heat.
	if _, err := s.EnumText().Set(ctx, kinds.ModeHeat); err != nil {
		t.Fatal(err)
	}
	runTyped(t, url, "vdel", "s/enum", "cool").want(t, exitNegative, ptr(""))
	runTyped(t, url, "vdel", "s/enum", "warm").want(t, exitUsage, ptr(""))
	runTyped(t, url, "vdel", "s/enum", `"heat"`).want(t, exitOK, ptr(""))
	if _, err := s.PackedInt().Set(ctx, 300); err != nil {
		t.Fatal(err)
	}
	runTyped(t, url, "vdel", "m/int", "300").want(t, exitOK, ptr("")) // 300 as MessagePack, not text

	// A guarded key is deleted under its lease.
	value := `{"mode":"heat","inner":{"name":"x"},"b":false,"i":0,"i8":0,"i16":0,"i32":0,"i64":0,"u":0,"u8":0,"u16":0,"u32":0,"u64":0,"f32":0,"f64":21.5,"s":"","at":"2026-01-01T00:00:00Z","every":"0s"}`
	runTyped(t, url, "set", "thermostats/k/setPoint", value).want(t, exitOK, nil)
	run(t, url, "del", "thermostats/k/setPoint").want(t, exitNegative, ptr("")) // no schema: unfenced, refused
	runTyped(t, url, "del", "thermostats/k/setPoint").want(t, exitOK, ptr(""))
	if _, ok := eng.Lookup([]byte("thermostats/k/setPoint")); ok {
		t.Error("still there")
	}
}

// TestSchemaResolvesAKeyThatIsNotUTF8: a declared key whose parameter is
// not UTF-8 is the declaration's, as serve --enforce and generated
// accessors take it: get decodes it, set checks the value against it.
func TestSchemaResolvesAKeyThatIsNotUTF8(t *testing.T) {
	_, url, eng := typedStore(t)
	file := filepath.Join(t.TempDir(), "ssgen.yaml")
	yaml := "version: 1\npackage: p\ngroups:\n  D:\n    path: d/{id}\n    params: {id: string}\n    keys:\n      R: {path: r, type: float64, encoding: string}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	key := "d/\xff/r"
	run(t, url, "set", key, "21.5").want(t, exitOK, nil) // no schema: bytes
	runIn(t, "", nil, "get", "--broker", url, "--schema", file, key).want(t, exitOK, ptr("21.5\n"))
	r := runIn(t, "", nil, "set", "--broker", url, "--schema", file, key, "warm")
	r.want(t, exitUsage, ptr(""))
	if v, _ := eng.Lookup([]byte(key)); string(v.Value) != "21.5" {
		t.Errorf("a misfit was stored: %q (stderr %q)", v.Value, r.stderr)
	}
}
