package server_test

import (
	"strconv"
	"strings"
	"testing"

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
