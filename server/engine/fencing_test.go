package engine

import (
	"testing"
	"time"
)

func TestFencingRules(t *testing.T) {
	lock := tsAt(0, 1, "StateStore") // a token as a lock's SET would return it
	older := tsAt(0, 0, "StateStore")
	newer := tsAt(0, 2, "StateStore")
	fenced := step{args: args("SET k v"), ft: lock, want: ok, wantTS: true}
	runTable(t, []tableCase{
		{name: "unfenced key accepts writes without a token", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("SET k w"), want: ok, wantTS: true},
			{args: args("DEL k"), want: one, wantTS: true},
		}},
		{name: "SET with a token on an absent key fences it", steps: []step{
			fenced,
			{args: args("SET k w"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "SET with a token on an unfenced key fences it", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			fenced,
			{args: args("SET k w"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "SET without token on a fenced key", steps: []step{
			fenced, {args: args("SET k w"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "DEL without token on a fenced key", steps: []step{
			fenced, {args: args("DEL k"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "VDEL without token on a fenced key", steps: []step{
			fenced, {args: args("VDEL k v"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "SET with an older token", steps: []step{
			fenced, {args: args("SET k w"), ft: older, want: errp(ErrFencingTokenLowerVersion)},
		}},
		{name: "DEL with an older token", steps: []step{
			fenced, {args: args("DEL k"), ft: older, want: errp(ErrFencingTokenLowerVersion)},
		}},
		{name: "VDEL with an older token", steps: []step{
			fenced, {args: args("VDEL k v"), ft: older, want: errp(ErrFencingTokenLowerVersion)},
		}},
		{name: "older token loses on node id order too", steps: []step{
			fenced, {args: args("SET k w"), ft: tsAt(0, 1, "AAA"), want: errp(ErrFencingTokenLowerVersion)},
		}},
		{name: "SET with an equal token", steps: []step{
			fenced, {args: args("SET k w"), ft: lock, want: ok, wantTS: true},
		}},
		{name: "padded equal token is equal", steps: []step{
			fenced, {args: args("SET k w"), ft: "00" + lock[:13] + ":00001:StateStore", want: ok, wantTS: true},
		}},
		{name: "SET with a newer token stores it", steps: []step{
			fenced,
			{args: args("SET k w"), ft: newer, want: ok, wantTS: true},
			{args: args("SET k x"), ft: lock, want: errp(ErrFencingTokenLowerVersion)},
			{args: args("SET k x"), ft: newer, want: ok, wantTS: true},
		}},
		{name: "SET with an older token never lowers the fence", steps: []step{
			fenced,
			{args: args("SET k w"), ft: older, want: errp(ErrFencingTokenLowerVersion)},
			{args: args("SET k w"), ft: lock, want: ok, wantTS: true},
		}},
		{name: "DEL with an equal token deletes and removes the fence", steps: []step{
			fenced,
			{args: args("DEL k"), ft: lock, want: one, wantTS: true},
			{args: args("SET k w"), want: ok, wantTS: true},
			{args: args("SET k x"), want: ok, wantTS: true},
		}},
		{name: "VDEL with a newer token deletes and removes the fence", steps: []step{
			fenced,
			{args: args("VDEL k v"), ft: newer, want: one, wantTS: true},
			{args: args("SET k w"), want: ok, wantTS: true},
		}},
		{name: "fencing is checked before VDEL compares the value", steps: []step{
			fenced, {args: args("VDEL k other"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "fencing is checked before the NX condition", steps: []step{
			fenced, {args: args("SET k w NX"), want: errp(ErrFencingTokenRequired)},
		}},
		{name: "NEX renewal with the token", steps: []step{
			fenced, {args: args("SET k v NEX PX 1000"), ft: lock, want: ok, wantTS: true},
		}},
		{name: "GET and KEYNOTIFY need no token", steps: []step{
			fenced,
			{args: args("GET k"), want: bulk("v"), wantTS: true},
			{args: args("KEYNOTIFY k"), want: ok, wantTS: true},
		}},
		{name: "absent key needs no token for DEL and VDEL", steps: []step{
			{args: args("DEL k"), want: zero, wantTS: true},
			{args: args("VDEL k v"), want: zero, wantTS: true},
		}},
	})
}

func TestExpiredFencedKeyLosesItsFence(t *testing.T) {
	h := newHarness(t, Config{})
	h.run(step{args: args("SET k v PX 10"), ft: tsAt(0, 1, "S"), want: ok, wantTS: true})
	h.clock.Advance(10 * time.Millisecond)
	h.run(step{args: args("SET k w"), want: ok, wantTS: true})
	if e, _ := h.eng.Lookup([]byte("k")); !e.FencingToken.IsZero() {
		t.Fatalf("fence %v survived expiry", e.FencingToken)
	}
}

// The public article's lock-and-fence story: Client1 takes the lock and
// fences ProtectedKey with the lock's version; Client2 cannot take the lock
// while Client1 holds it; after the lock expires Client2 takes it and
// writes with its newer token; the paused Client1 then cannot write any
// more, with or without its old token.
func TestArticleLockAndFenceScenario(t *testing.T) {
	h := newHarness(t, Config{})
	c1 := func(s step) step { s.client = "Client1"; return s }
	c2 := func(s step) step { s.client = "Client2"; return s }

	lock1 := h.run(c1(step{args: args("SET LockName Client1 NEX PX 10000"), ts: "1696374425000:0:Client1", want: ok, wantTS: true}))
	if want := mustParse(t, "1696374425000:1:StateStore"); lock1.Version != want {
		t.Fatalf("lock version %v, want %v", lock1.Version, want)
	}
	h.clock.Advance(time.Millisecond)
	h.run(c1(step{args: args("SET ProtectedKey v1"), ts: "1696374425001:0:Client1", ft: lock1.Version.String(), want: ok, wantTS: true}))
	h.run(c2(step{args: args("SET LockName Client2 NEX PX 10000"), want: minusOne, wantTS: true}))
	h.run(c2(step{args: args("SET ProtectedKey v2"), want: errp(ErrFencingTokenRequired)}))

	h.clock.Advance(5 * time.Second) // Client1 renews: same SET
	h.run(c1(step{args: args("SET LockName Client1 NEX PX 10000"), want: ok, wantTS: true}))
	h.clock.Advance(9 * time.Second) // still held thanks to the renewal
	h.run(c2(step{args: args("SET LockName Client2 NEX PX 10000"), want: minusOne, wantTS: true}))

	h.clock.Advance(2 * time.Second) // Client1 paused; its lock expires
	h.eng.Expire()
	lock2 := h.run(c2(step{args: args("SET LockName Client2 NEX PX 10000"), want: ok, wantTS: true}))
	if lock2.Version.Compare(lock1.Version) <= 0 {
		t.Fatalf("second lock version %v not above %v", lock2.Version, lock1.Version)
	}
	h.run(c2(step{args: args("SET ProtectedKey v2"), ft: lock2.Version.String(), want: ok, wantTS: true}))

	// Client1 wakes up believing it still holds the lock.
	h.run(c1(step{args: args("SET ProtectedKey stale"), ft: lock1.Version.String(), want: errp(ErrFencingTokenLowerVersion)}))
	h.run(c1(step{args: args("SET ProtectedKey stale"), want: errp(ErrFencingTokenRequired)}))
	h.run(c1(step{args: args("VDEL LockName Client1"), want: minusOne, wantTS: true}))
	h.run(c2(step{args: args("GET ProtectedKey"), want: bulk("v2"), wantTS: true}))

	h.run(c2(step{args: args("VDEL LockName Client2"), want: one, wantTS: true}))
	if e, _ := h.eng.Lookup([]byte("ProtectedKey")); e.FencingToken != lock2.Version {
		t.Fatalf("ProtectedKey fenced by %v, want %v: a released lock leaves its keys fenced", e.FencingToken, lock2.Version)
	}
}
