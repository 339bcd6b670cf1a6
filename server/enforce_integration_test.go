package server_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
)

// numberCheck declares "typed/*" as holding a decimal integer: a stand-in
// for serve's schema check (cmd/ssgen), so these tests pin the server's
// part: which requests are looked at and what each mode does.
func numberCheck(key, value []byte) *server.WriteProblem {
	if !strings.HasPrefix(string(key), "typed/") {
		return nil
	}
	if _, err := strconv.Atoi(string(value)); err != nil {
		return &server.WriteProblem{Declaration: "Typed", Path: ".n", Reason: "decode", Msg: "not a number\r\nsecond line"}
	}
	return nil
}

func enforceOpts(mode server.Enforce, tr *chaosTrace) func(*server.Options) {
	return func(o *server.Options) {
		o.Enforce, o.WriteCheck = mode, numberCheck
		tr.opt(o)
	}
}

func TestEnforceRefuseAnswersSchemaViolation(t *testing.T) {
	var tr chaosTrace
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("enforce-app")
		checkResponse(t, c.do("SET", "typed/a", "12"), "+OK\r\n", true)
		// The text names the declaration and path; line breaks of the
		// message stay data (no second RESP line).
		checkResponse(t, c.do("SET", "typed/a", "twelve"),
			"-ERR schema violation: Typed .n: not a number  second line\r\n", false)
		if v, _ := e.srv.Engine().Lookup([]byte("typed/a")); string(v.Value) != "12" {
			t.Fatalf("refused write applied: %q", v.Value)
		}
		// Undeclared keys and other verbs are untouched.
		checkResponse(t, c.do("SET", "free", "twelve"), "+OK\r\n", true)
		checkResponse(t, c.do("GET", "typed/a"), "$2\r\n12\r\n", true)
		// The verb is matched as the engine matches it: exactly.
		checkResponse(t, c.do("set", "typed/b", "x"), "-ERR unknown command\r\n", false)
	}, enforceOpts(server.EnforceRefuse, &tr))
	found := false
	tr.mu.Lock()
	for _, ev := range tr.events {
		if ev.SchemaDeclaration == "Typed" && ev.SchemaReason == "decode" && strings.Contains(ev.Reason, "schema decode: Typed .n") {
			found = true
		}
	}
	tr.mu.Unlock()
	if !found {
		t.Fatal("no trace event names the schema violation")
	}
}

func TestEnforceWarnAppliesAndReports(t *testing.T) {
	var tr chaosTrace
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("enforce-app")
		checkResponse(t, c.do("SET", "typed/a", "twelve"), "+OK\r\n", true)
		if v, _ := e.srv.Engine().Lookup([]byte("typed/a")); string(v.Value) != "twelve" {
			t.Fatalf("warned write not applied: %q", v.Value)
		}
	}, enforceOpts(server.EnforceWarn, &tr))
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, ev := range tr.events {
		if ev.SchemaDeclaration == "Typed" && ev.Error == "" && strings.Contains(ev.Reason, "--enforce warn: applied") {
			n++
		}
	}
	if n != 2 { // one per transport
		t.Fatalf("%d warned events, want 2", n)
	}
}

func TestEnforceOffLooksAtNothing(t *testing.T) {
	var tr chaosTrace
	embeddedOnly(t, func(t *testing.T, e *env) {
		c := e.connect("enforce-app")
		checkResponse(t, c.do("SET", "typed/a", "twelve"), "+OK\r\n", true)
	}, enforceOpts(server.EnforceOff, &tr))
	for _, ev := range tr.events {
		if ev.SchemaDeclaration != "" {
			t.Fatalf("off reported %+v", ev)
		}
	}
}

// ruledJudge stands in for serve's transition check on "ruled/*": its
// Judge knows a replaced value only once Learn has read it (as
// schemacheck does with a large value), except on "ruled/never", and
// refuses the new value "bad". Learn takes the engine's lock itself
// (Lookup), so it would never return if it ran under it.
type ruledJudge struct {
	srv            func() *server.Server
	mu             sync.Mutex
	known          map[string]bool // key and version learned
	judged, learnt map[string]int  // by key
}

func (r *ruledJudge) check(key, value []byte) *server.Transition {
	k := string(key)
	if !strings.HasPrefix(k, "ruled/") {
		return nil
	}
	bad := string(value) == "bad"
	return &server.Transition{
		Declaration: "Ruled",
		Judge: func(old []byte, version hlc.HLC) (*server.WriteProblem, bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.judged[k]++
			if !r.known[k+" "+version.String()] {
				return nil, false
			}
			if bad {
				return &server.WriteProblem{Declaration: "Ruled", Path: ".x", Reason: "monotonic", Msg: "bad"}, true
			}
			return nil, true
		},
		Learn: func(old []byte, version hlc.HLC) {
			if cur, _ := r.srv().Engine().Lookup(key); cur.Version != version || string(cur.Value) != string(old) {
				panic("Learn was given another value than the key's")
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.learnt[k]++
			if k != "ruled/never" {
				r.known[k+" "+version.String()] = true
			}
		},
	}
}

// A judge that needs the replaced value read gets it read outside the
// engine's lock (Learn), and the SET is decided again; one that still
// does not know it after transitionTries decisions finds the write
// "busy": refused under refuse, applied and reported under warn.
func TestEnforceTransitionJudgeLearnsOutsideTheLockThenGivesUp(t *testing.T) {
	for _, mode := range []server.Enforce{server.EnforceRefuse, server.EnforceWarn} {
		var tr chaosTrace
		r := &ruledJudge{known: map[string]bool{}, judged: map[string]int{}, learnt: map[string]int{}}
		embeddedOnly(t, func(t *testing.T, e *env) {
			r.srv = func() *server.Server { return e.srv }
			c := e.connect("enforce-app")
			checkResponse(t, c.do("SET", "ruled/a", "1"), "+OK\r\n", true)
			if mode == server.EnforceRefuse {
				checkResponse(t, c.do("SET", "ruled/a", "bad"), "-ERR schema violation: Ruled .x: bad\r\n", false)
			} else {
				checkResponse(t, c.do("SET", "ruled/a", "bad"), "+OK\r\n", true)
			}
			checkResponse(t, c.do("SET", "ruled/never", "1"), "+OK\r\n", true)
			if mode == server.EnforceRefuse {
				checkResponse(t, c.do("SET", "ruled/never", "2"),
					"-ERR schema violation: Ruled: the value replaced kept changing while it was read; retry the write\r\n", false)
			} else {
				checkResponse(t, c.do("SET", "ruled/never", "2"), "+OK\r\n", true)
			}
		}, func(o *server.Options) {
			o.Enforce, o.TransitionCheck = mode, r.check
			tr.opt(o)
		})
		r.mu.Lock()
		if r.judged["ruled/a"] != 2 || r.learnt["ruled/a"] != 1 || r.judged["ruled/never"] != 3 || r.learnt["ruled/never"] != 2 {
			t.Fatalf("%v: judged %v, learnt %v", mode, r.judged, r.learnt)
		}
		r.mu.Unlock()
		tr.mu.Lock()
		busy := 0
		for _, ev := range tr.events {
			if ev.SchemaDeclaration == "Ruled" && ev.SchemaReason == "busy" {
				busy++
			}
		}
		tr.mu.Unlock()
		if busy != 1 {
			t.Fatalf("%v: %d busy events, want 1", mode, busy)
		}
	}
}

// Server.Exec (the console's writes) is checked as a client's SET is:
// a misfit value and a broken transition rule are refused under refuse,
// applied and reported under warn.
func TestEnforceChecksExec(t *testing.T) {
	for _, mode := range []server.Enforce{server.EnforceRefuse, server.EnforceWarn} {
		var tr chaosTrace
		r := &ruledJudge{known: map[string]bool{}, judged: map[string]int{}, learnt: map[string]int{}}
		embeddedOnly(t, func(t *testing.T, e *env) {
			r.srv = func() *server.Server { return e.srv }
			exec := func(args ...string) (string, string) {
				var a [][]byte
				for _, s := range args {
					a = append(a, []byte(s))
				}
				res := e.srv.Exec(server.ExecRequest{Client: "console", Args: a})
				v, _ := e.srv.Engine().Lookup([]byte(args[1]))
				return string(res.Err), string(v.Value)
			}
			refused := mode == server.EnforceRefuse
			for _, tc := range []struct{ key, first, then, err string }{
				{"typed/a", "12", "twelve", "schema violation: Typed .n: not a number  second line"},
				{"ruled/a", "1", "bad", "schema violation: Ruled .x: bad"},
			} {
				if err, _ := exec("SET", tc.key, tc.first); err != "" {
					t.Fatalf("%v: SET %s %s: %s", mode, tc.key, tc.first, err)
				}
				err, stored := exec("SET", tc.key, tc.then)
				switch {
				case refused && (err != tc.err || stored != tc.first):
					t.Errorf("%v: SET %s %s: error %q, stored %q; want %q, %q kept", mode, tc.key, tc.then, err, stored, tc.err, tc.first)
				case !refused && (err != "" || stored != tc.then):
					t.Errorf("%v: SET %s %s: error %q, stored %q; want it applied", mode, tc.key, tc.then, err, stored)
				}
			}
		}, func(o *server.Options) {
			o.Enforce, o.WriteCheck, o.TransitionCheck = mode, numberCheck, r.check
			tr.opt(o)
		})
		tr.mu.Lock()
		reported := map[string]bool{}
		for _, ev := range tr.events {
			if ev.Exec && ev.SchemaDeclaration != "" {
				reported[ev.SchemaDeclaration+" "+ev.SchemaReason] = true
			}
		}
		tr.mu.Unlock()
		if !reported["Typed decode"] || !reported["Ruled monotonic"] {
			t.Errorf("%v: trace events of Exec's misfits: %v", mode, reported)
		}
	}
}
