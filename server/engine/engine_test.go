package engine

import (
	"errors"
	"testing"
)

func TestErrorPayloadsAreTheContractTexts(t *testing.T) {
	want := map[Error]string{
		ErrTimestampSkew:            "-ERR the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n",
		ErrFencingTokenRequired:     "-ERR a fencing token is required for this request\r\n",
		ErrFencingTokenSkew:         "-ERR the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized\r\n",
		ErrFencingTokenLowerVersion: "-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n",
		ErrQuotaExceeded:            "-ERR the quota has been exceeded\r\n",
		ErrSyntax:                   "-ERR syntax error\r\n",
		ErrNotAuthorized:            "-ERR not authorized\r\n",
		ErrUnknownCommand:           "-ERR unknown command\r\n",
		ErrWrongNumberOfArguments:   "-ERR wrong number of arguments\r\n",
		ErrMissingTimestamp:         "-ERR missing timestamp\r\n",
		ErrMalformedTimestamp:       "-ERR malformed timestamp\r\n",
		ErrKeyLengthZero:            "-ERR the key length is zero\r\n",
		ErrInvalidToken:             "-ERR invalid continuation token\r\n",
		ErrPersistence:              "-ERR persistence failure: the change could not be written to disk and was not applied\r\n",
		ErrSchemaViolation:          "-ERR schema violation: \r\n", // a prefix: the server adds the declaration
	}
	for e, p := range want {
		if got := string(errResult(e).Payload); got != p {
			t.Errorf("errResult(%q) = %q, want %q", string(e), got, p)
		}
		if !errResult(e).Version.IsZero() {
			t.Errorf("errResult(%q) carries a version", string(e))
		}
	}
	if len(errPayloads) != len(want) {
		t.Errorf("errPayloads has %d texts, the contract %d", len(errPayloads), len(want))
	}
}

func TestErrorsWorkWithErrorsIs(t *testing.T) {
	var err error = ErrQuotaExceeded
	if !errors.Is(err, ErrQuotaExceeded) || errors.Is(err, ErrSyntax) {
		t.Fatal("errors.Is does not tell Error values apart")
	}
	var e Error
	if !errors.As(error(ErrSyntax), &e) || e != ErrSyntax {
		t.Fatal("errors.As does not recover an Error")
	}
}

func TestRequestsRefusedBeforeAnyCommandLogic(t *testing.T) {
	runTable(t, []tableCase{
		{name: "empty request is a syntax error", steps: []step{{args: []string{}, want: errp(ErrSyntax)}}},
		{name: "unknown verb", steps: []step{{args: args("INCR k"), want: errp(ErrUnknownCommand)}}},
		{name: "lower-case verb is unknown like on the real service", steps: []step{
			{args: args("set k v"), want: errp(ErrUnknownCommand)},
			{args: args("get k"), want: errp(ErrUnknownCommand)},
			{args: args("Del k"), want: errp(ErrUnknownCommand)},
		}},
		{name: "empty verb", steps: []step{{args: []string{"", "k"}, want: errp(ErrUnknownCommand)}}},
		{name: "unknown verb wins over arity", steps: []step{{args: args("FLUSHALL"), want: errp(ErrUnknownCommand)}}},
	})
}

func TestWrongNumberOfArguments(t *testing.T) {
	runTable(t, []tableCase{
		{name: "SET without key", steps: []step{{args: args("SET"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "SET without value", steps: []step{{args: args("SET k"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "GET without key", steps: []step{{args: args("GET"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "GET with two keys", steps: []step{{args: args("GET a b"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "DEL without key", steps: []step{{args: args("DEL"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "DEL with two keys", steps: []step{{args: args("DEL a b"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "VDEL without value", steps: []step{{args: args("VDEL k"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "VDEL with extra", steps: []step{{args: args("VDEL k v x"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "KEYNOTIFY without key", steps: []step{{args: args("KEYNOTIFY"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "KEYNOTIFY with two options", steps: []step{{args: args("KEYNOTIFY k STOP STOP"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "SCAN without pattern", steps: []step{{args: args("SCAN"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "SCAN with extra", steps: []step{{args: args("SCAN * t x"), want: errp(ErrWrongNumberOfArguments)}}},
		{name: "arity is checked before the key", steps: []step{{args: []string{"GET", "", "x"}, want: errp(ErrWrongNumberOfArguments)}}},
	})
}

func TestEmptyKeyIsRefusedByEveryKeyCommand(t *testing.T) {
	runTable(t, []tableCase{
		{name: "SET", steps: []step{{args: []string{"SET", "", "v"}, want: errp(ErrKeyLengthZero)}}},
		{name: "SET before option syntax", steps: []step{{args: []string{"SET", "", "v", "BOGUS"}, want: errp(ErrKeyLengthZero)}}},
		{name: "SET before timestamps", steps: []step{{args: []string{"SET", "", "v"}, noTS: true, want: errp(ErrKeyLengthZero)}}},
		{name: "GET", steps: []step{{args: []string{"GET", ""}, want: errp(ErrKeyLengthZero)}}},
		{name: "DEL", steps: []step{{args: []string{"DEL", ""}, want: errp(ErrKeyLengthZero)}}},
		{name: "VDEL", steps: []step{{args: []string{"VDEL", "", "v"}, want: errp(ErrKeyLengthZero)}}},
		{name: "KEYNOTIFY", steps: []step{{args: []string{"KEYNOTIFY", ""}, want: errp(ErrKeyLengthZero)}}},
		{name: "KEYNOTIFY STOP", steps: []step{{args: []string{"KEYNOTIFY", "", "STOP"}, want: errp(ErrKeyLengthZero)}}},
	})
}

func TestErrorsChangeNothing(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{args: args("SET k v"), want: ok, wantTS: true})
	before, _ := h.eng.Lookup([]byte("k"))
	h.takeNotes()
	for _, s := range []step{
		{args: args("SET k w BOGUS"), want: errp(ErrSyntax)},
		{args: args("SET k w"), noTS: true, want: errp(ErrMissingTimestamp)},
		{args: args("SET k w"), ts: "junk", want: errp(ErrMalformedTimestamp)},
		{args: args("DEL k"), ts: tsAt(2*60e9, 0, "C"), want: errp(ErrTimestampSkew)},
		{args: args("VDEL k v"), ft: "x", want: errp(ErrMalformedTimestamp)},
	} {
		h.run(s)
	}
	after, found := h.eng.Lookup([]byte("k"))
	if !found || string(after.Value) != "v" || after.Version != before.Version {
		t.Fatalf("refused requests changed the key: %+v -> %+v", before, after)
	}
	if n := h.takeNotes(); len(n) != 0 {
		t.Fatalf("refused requests notified: %v", n)
	}
}
