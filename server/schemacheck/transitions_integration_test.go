package schemacheck_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/tests/e2e"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/schemacheck"
	"github.com/ssgen/ssgen/server/servertest"
)

// events collects the server's request events.
type events struct {
	mu  sync.Mutex
	evs []server.RequestEvent
}

func (e *events) add(ev *server.RequestEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, *ev)
}

func (e *events) find(reason string) *server.RequestEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.evs {
		if e.evs[i].SchemaReason == reason {
			return &e.evs[i]
		}
	}
	return nil
}

// eachTransport runs f against the embedded server and against a
// service attached to mosquitto (ssgen serve --broker).
func eachTransport(t *testing.T, f func(t *testing.T, broker string)) {
	t.Run("embedded", func(t *testing.T) { f(t, "") })
	t.Run("mosquitto", func(t *testing.T) { f(t, brokertest.Mosquitto(t)) })
}

func enforcing(t *testing.T, broker string, mode server.Enforce) (*server.Server, *events) {
	t.Helper()
	sc, err := schema.LoadFile("../../internal/tests/e2e/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	evs := &events{}
	opt := servertest.WithOptions(func(o *server.Options) {
		o.Enforce, o.WriteCheck, o.TransitionCheck = mode, schemacheck.New(sc), schemacheck.Transitions(sc)
		o.OnRequest = evs.add
	})
	if broker != "" {
		return servertest.NewExternal(t, broker, opt), evs
	}
	return servertest.New(t, opt), evs
}

func device(t *testing.T, d e2e.Device) []byte {
	t.Helper()
	b, err := codec.MsgPack[e2e.Device]{}.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// A raw client (byte-level Set, no generated checks) breaking an immutable
// and a monotonic field: refused with the schema violation naming the
// declaration and field path, nothing changed; a fine write passes.
func TestEnforceRefuseRefusesABrokenTransitionRuleFromARawClient(t *testing.T) {
	eachTransport(t, testRefuseRaw)
}

func testRefuseRaw(t *testing.T, broker string) {
	srv, evs := enforcing(t, broker, server.EnforceRefuse)
	c := clienttest.Dial(t, srv.URL())
	ctx := clienttest.Context(t)
	key := []byte("thermostats/a/device")
	first := device(t, e2e.Device{Serial: "A-1", Seq: 5, Seen: t0, Info: &e2e.DeviceInfo{Since: t0, Level: 2}})
	if _, err := c.Set(ctx, key, first, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		d    e2e.Device
		want string // "" when fine
	}{
		{"immutable", e2e.Device{Serial: "B-2", Seq: 6, Seen: t0, Info: &e2e.DeviceInfo{Since: t0, Level: 2}},
			`schema violation: Thermostat.Device .serial: immutable field changed from "A-1" to "B-2"`},
		{"monotonic", e2e.Device{Serial: "A-1", Seq: 5, Seen: t0, Info: &e2e.DeviceInfo{Since: t0, Level: 2}},
			"schema violation: Thermostat.Device .seq: monotonic (increasing) field moved from 5 to 5"},
		{"nested time", e2e.Device{Serial: "A-1", Seq: 6, Seen: t0, Info: &e2e.DeviceInfo{Since: t0.Add(time.Second), Level: 2}},
			"schema violation: Thermostat.Device .info.since: immutable field changed from \"2026-11-27T12:00:00Z\" to \"2026-11-27T12:00:01Z\""},
		{"nested optional dropped", e2e.Device{Serial: "A-1", Seq: 6, Seen: t0, Info: &e2e.DeviceInfo{Since: t0}},
			"schema violation: Thermostat.Device .info.level: monotonic (non_decreasing) field dropped (was 2)"},
		{"struct dropped", e2e.Device{Serial: "A-1", Seq: 6, Seen: t0},
			"schema violation: Thermostat.Device .info.since: immutable field dropped (was \"2026-11-27T12:00:00Z\")"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Set(ctx, key, device(t, tt.d), runtime.SetOptions{})
			var se *runtime.ServiceError
			if !errors.Is(err, runtime.ErrSchemaViolation) || !errors.As(err, &se) || se.Text != tt.want {
				t.Fatalf("got %v, want -ERR %s", err, tt.want)
			}
			if v, _, _ := c.Get(ctx, key); string(v) != string(first) {
				t.Fatal("the refused write was applied")
			}
		})
	}
	if ev := evs.find("monotonic"); ev == nil || ev.SchemaDeclaration != "Thermostat.Device" || !strings.HasPrefix(ev.Reason, "schema monotonic: Thermostat.Device .seq") {
		t.Fatalf("trace event: %+v", ev)
	}
	if ev := evs.find("immutable"); ev == nil || strings.Contains(ev.Reason, "applied") {
		t.Fatalf("trace event: %+v", ev)
	}
	// A fine write, and a write over nothing, pass; so does any write to
	// a key whose type has no rules.
	fine := device(t, e2e.Device{Serial: "A-1", Seq: 6, Seen: t0.Add(time.Hour), Owner: "ops", Info: &e2e.DeviceInfo{Since: t0, Level: 2}})
	if _, err := c.Set(ctx, key, fine, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set(ctx, []byte("thermostats/b/device"), device(t, e2e.Device{Serial: "x"}), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEnforceWarnAppliesABrokenTransitionRuleAndReportsIt(t *testing.T) {
	eachTransport(t, testWarn)
}

func testWarn(t *testing.T, broker string) {
	srv, evs := enforcing(t, broker, server.EnforceWarn)
	c := clienttest.Dial(t, srv.URL())
	ctx := clienttest.Context(t)
	key := []byte("thermostats/a/device")
	if _, err := c.Set(ctx, key, device(t, e2e.Device{Serial: "A-1", Seq: 5}), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := device(t, e2e.Device{Serial: "B-2", Seq: 6})
	if _, err := c.Set(ctx, key, bad, runtime.SetOptions{}); err != nil {
		t.Fatalf("warn refused: %v", err)
	}
	if v, _, _ := c.Get(ctx, key); string(v) != string(bad) {
		t.Fatal("warn did not apply the write")
	}
	ev := evs.find("immutable")
	if ev == nil || ev.Error != "" || !strings.Contains(ev.Reason, "schema immutable: Thermostat.Device .serial") || !strings.Contains(ev.Reason, "applied") {
		t.Fatalf("trace event: %+v", ev)
	}
}

// Two raw writers race to move seq from the same old value to the same
// new one: the check runs under the engine's lock, so exactly one of them
// wins each round (the other finds the value it would not increase).
func TestEnforceRefuseLetsOneOfTwoRacingWritersOverOneOldValuePass(t *testing.T) {
	eachTransport(t, testRace)
}

func testRace(t *testing.T, broker string) {
	srv, _ := enforcing(t, broker, server.EnforceRefuse)
	ctx := clienttest.Context(t)
	clients := []*runtime.Client{clienttest.Dial(t, srv.URL()), clienttest.Dial(t, srv.URL())}
	key := []byte("thermostats/race/device")
	for round := uint64(1); round <= 30; round++ {
		if _, err := clients[0].Set(ctx, []byte("thermostats/race/device"), device(t, e2e.Device{Serial: "r", Seq: round * 10}), runtime.SetOptions{}); err != nil {
			t.Fatalf("round %d: reset: %v", round, err)
		}
		next := device(t, e2e.Device{Serial: "r", Seq: round*10 + 1})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.Set(ctx, key, next, runtime.SetOptions{})
			}()
		}
		wg.Wait()
		passed := 0
		for _, err := range errs {
			switch {
			case err == nil:
				passed++
			case !errors.Is(err, runtime.ErrSchemaViolation):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if passed != 1 {
			t.Fatalf("round %d: %d writers passed, want exactly 1 (%v)", round, passed, errs)
		}
	}
}

// The stall attack (issue 28): a client stores a large value of a key
// with rules, then sends writes the rules refuse, in a loop. Each used to
// decode the large value inside the engine's lock, so every other client
// waited (and the decodes' memory piled up). Now a value written through
// the check is never decoded again, one the check has not seen (written
// before the server started, restored or imported, or pushed out of its cache)
// is decoded once, outside the lock, and the refusals inside it compare
// what is remembered of it; a GET of another key is answered meanwhile.
func TestEnforceRefuseDecodesALargeReplacedValueOnceOutsideTheLock(t *testing.T) {
	srv, decodes := countingRefuser(t)
	attacker, other := clienttest.Dial(t, srv.URL()), clienttest.Dial(t, srv.URL())
	ctx := clienttest.Context(t)
	key := []byte("thermostats/big/device")
	unchecked := func(v []byte) { // put in the engine as a restore or an import does: not looked at
		if err := srv.Engine().Put(key, v, engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	large := func(seq uint64) []byte {
		tags := make([]e2e.DeviceInfo, 20000)
		for i := range tags {
			tags[i] = e2e.DeviceInfo{Since: t0, Level: int32(i), Uptime: time.Duration(i)}
		}
		return device(t, e2e.Device{Serial: "A-1", Seq: seq, Seen: t0, Tags: tags})
	}
	if _, err := other.Set(ctx, []byte("other"), []byte("x"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	attack := func(big []byte, wantLocked, wantLearned int64) {
		t.Helper()
		refused := device(t, e2e.Device{Serial: "A-1", Seq: 1, Seen: t0})
		const attempts = 40
		done := make(chan error, 1)
		go func() {
			for range attempts {
				if _, err := attacker.Set(ctx, key, refused, runtime.SetOptions{}); !errors.Is(err, runtime.ErrSchemaViolation) {
					done <- err
					return
				}
			}
			done <- nil
		}()
		for range 10 {
			if v, _, err := other.Get(ctx, []byte("other")); err != nil || string(v) != "x" {
				t.Fatalf("GET of another key: %q, %v", v, err)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("a refused write: %v", err)
		}
		if locked, learned := decodes(); locked != wantLocked || learned != wantLearned {
			t.Fatalf("after %d refused writes over a %d-byte value: %d decodes of a value replaced inside the engine's lock, %d outside; want %d and %d",
				attempts, len(big), locked, learned, wantLocked, wantLearned)
		}
		if v, _, _ := other.Get(ctx, key); string(v) != string(big) {
			t.Fatal("a refused write was applied")
		}
	}
	// A large value the check has not seen: read once, outside the lock.
	big := large(5)
	if len(big) < 512<<10 {
		t.Fatalf("the large value is %d bytes", len(big))
	}
	unchecked(big)
	attack(big, 0, 1)
	// A large value written through the check (judged on what is
	// remembered of the one it replaces): never read again.
	big = large(6)
	if _, err := attacker.Set(ctx, key, big, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	attack(big, 0, 1)
	// A small value the check has not seen: read once, inside the lock
	// (a bounded decode).
	small := device(t, e2e.Device{Serial: "A-1", Seq: 7, Seen: t0})
	if len(small) > schemacheck.MaxLockedDecode {
		t.Fatal("the small value is not small")
	}
	unchecked(small)
	attack(small, 1, 1)
}

// A key that is not valid UTF-8 but whose bytes match a declaration (a
// generated accessor writes any string parameter as it is) is judged like
// any other: ssgen set $'versions/rooms/\xff/target' --raw garbage is
// refused under refuse, applied and reported under warn.
func TestEnforceJudgesAKeyThatIsNotUTF8(t *testing.T) {
	sc, err := schema.LoadFile("../../internal/tests/e2e/versions/v2/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("versions/rooms/\xff/target")
	for _, mode := range []server.Enforce{server.EnforceRefuse, server.EnforceWarn} {
		evs := &events{}
		srv := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
			o.Enforce, o.WriteCheck, o.TransitionCheck = mode, schemacheck.New(sc), schemacheck.Transitions(sc)
			o.OnRequest = evs.add
		}))
		c := clienttest.Dial(t, srv.URL())
		ctx := clienttest.Context(t)
		_, err := c.Set(ctx, key, []byte("garbage"), runtime.SetOptions{})
		v, _, _ := c.Get(ctx, key)
		switch mode {
		case server.EnforceRefuse:
			var se *runtime.ServiceError
			if !errors.Is(err, runtime.ErrSchemaViolation) || !errors.As(err, &se) || !strings.HasPrefix(se.Text, "schema violation: Room.Target") || v != nil {
				t.Fatalf("refuse: %v, stored %q", err, v)
			}
		default:
			if err != nil || string(v) != "garbage" {
				t.Fatalf("warn: %v, stored %q", err, v)
			}
		}
		if ev := evs.find("decode"); ev == nil || ev.SchemaDeclaration != "Room.Target" {
			t.Fatalf("%v: trace event %+v", mode, ev)
		}
	}
}

// A declared key longer than the cache's largest entry (64 KiB) with a
// value over 4 KiB: the value replaced is learned outside the lock and
// the SET judged, never refused "busy" for ever; a write through the
// check is remembered, so the next one decodes nothing.
func TestEnforceRefuseJudgesALargeValueUnderAVeryLongKey(t *testing.T) {
	srv, decodes := countingRefuser(t)
	c := clienttest.Dial(t, srv.URL())
	ctx := clienttest.Context(t)
	key := []byte("thermostats/" + strings.Repeat("a", 70<<10) + "/device")
	value := func(seq uint64) []byte {
		tags := make([]e2e.DeviceInfo, 400)
		for i := range tags {
			tags[i] = e2e.DeviceInfo{Since: t0, Level: int32(i)}
		}
		return device(t, e2e.Device{Serial: "A-1", Seq: seq, Seen: t0, Tags: tags})
	}
	if len(value(1)) <= schemacheck.MaxLockedDecode {
		t.Fatal("the value is not large")
	}
	if err := srv.Engine().Put(key, value(1), engine.PutOptions{}); err != nil { // not looked at
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 4; seq++ {
		if _, err := c.Set(ctx, key, value(seq), runtime.SetOptions{}); err != nil {
			t.Fatalf("SET seq %d: %v", seq, err)
		}
	}
	_, err := c.Set(ctx, key, value(4), runtime.SetOptions{})
	if !errors.Is(err, runtime.ErrSchemaViolation) || !strings.Contains(err.Error(), "monotonic") {
		t.Fatalf("a write breaking a rule: %v", err)
	}
	if locked, learned := decodes(); locked != 0 || learned != 1 {
		t.Fatalf("%d decodes of a value replaced inside the lock, %d outside; want 0 and 1", locked, learned)
	}
}

// countingRefuser is an embedded server under EnforceRefuse with the e2e
// schema, whose transition check counts the decodes of replaced values.
func countingRefuser(t *testing.T) (*server.Server, func() (locked, learned int64)) {
	t.Helper()
	sc, err := schema.LoadFile("../../internal/tests/e2e/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	check, decodes := schemacheck.TransitionsCounting(sc)
	return servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		o.Enforce, o.WriteCheck, o.TransitionCheck = server.EnforceRefuse, schemacheck.New(sc), check
	})), decodes
}
