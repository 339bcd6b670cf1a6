package access

import (
	"errors"
	"strings"
	"testing"
)

const testPolicy = `
rules:
  - principals:
      clientIds: ["reader-*"]
    stateStoreResources:
      - keyType: pattern
        keys: ["pub/*"]
        method: Read
  - principals:
      usernames: ["alice"]
      certificateNames: ["writer.example"]
    stateStoreResources:
      - keyType: string
        keys: ["exact"]
        method: Write
      - keyType: binary
        keys: ["AP8="]          # 0x00 0xFF
        method: readwrite
      - keyType: hex
        keys: ["0001"]
        method: ReadWrite
  - principals:
      clientIds: ["admin"]
    stateStoreResources:
      - keyType: Pattern
        keys: ["*"]
        method: ReadWrite
`

func TestPolicyDecidesEachCommandByRuleKind(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	reader := &Identity{clientID: "reader-1"}
	alice := &Identity{clientID: "x", username: "alice"}
	cert := &Identity{clientID: "y", certNames: []string{"other", "writer.example"}}
	admin := &Identity{clientID: "admin"}
	nobody := &Identity{clientID: "nobody", username: "bob"}
	for _, tc := range []struct {
		who  string
		id   *Identity
		args []string
		want bool
	}{
		{"reader", reader, []string{"GET", "pub/a"}, true},
		{"reader", reader, []string{"KEYNOTIFY", "pub/a"}, true},
		{"reader", reader, []string{"KEYNOTIFY", "pub/a", "STOP"}, true},
		{"reader", reader, []string{"SET", "pub/a", "v"}, false},
		{"reader", reader, []string{"DEL", "pub/a"}, false},
		{"reader", reader, []string{"VDEL", "pub/a", "v"}, false},
		{"reader", reader, []string{"GET", "priv/a"}, false},
		{"reader", reader, []string{"SCAN", "*"}, true}, // answered with the keys it may read
		{"alice", alice, []string{"SET", "exact", "v"}, true},
		{"alice", alice, []string{"DEL", "exact"}, true},
		{"alice", alice, []string{"GET", "exact"}, false},
		{"alice", alice, []string{"SET", "exactly", "v"}, false},
		{"alice", alice, []string{"GET", "\x00\xff"}, true},
		{"alice", alice, []string{"SET", "\x00\xff", "v"}, true},
		{"alice", alice, []string{"VDEL", "\x00\x01", "v"}, true},
		{"cert", cert, []string{"SET", "exact", "v"}, true},
		{"admin", admin, []string{"SCAN", "*"}, true},
		{"admin", admin, []string{"SET", "anything", "v"}, true},
		{"nobody", nobody, []string{"GET", "pub/a"}, false},
		{"unverified user name", &Identity{clientID: "z"}, []string{"SET", "exact", "v"}, false},
		{"unknown verb goes to the engine", nobody, []string{"FLUSH"}, true},
		{"empty key goes to the engine", nobody, []string{"GET", ""}, true},
		{"missing key goes to the engine", nobody, []string{"GET"}, true},
	} {
		args := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			args[i] = []byte(a)
		}
		if got := p.permits(tc.id, args); got != tc.want {
			t.Errorf("%s %q: permits = %v, want %v", tc.who, tc.args, got, tc.want)
		}
	}
}

func TestPolicyRejectsUnknownKindsAndFields(t *testing.T) {
	for name, text := range map[string]string{
		"method":  "rules: [{principals: {clientIds: [a]}, stateStoreResources: [{keyType: string, keys: [k], method: Admin}]}]",
		"keyType": "rules: [{principals: {clientIds: [a]}, stateStoreResources: [{keyType: regex, keys: [k], method: Read}]}]",
		"base64":  "rules: [{principals: {clientIds: [a]}, stateStoreResources: [{keyType: binary, keys: ['!!'], method: Read}]}]",
		"hex":     "rules: [{principals: {clientIds: [a]}, stateStoreResources: [{keyType: hex, keys: [zz], method: Read}]}]",
		"field":   "rules: [{principals: {clientId: [a]}}]",
	} {
		if _, err := ParsePolicy([]byte(text)); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: err %v, want ErrPolicy", name, err)
		}
	}
}

// Resolved grants answer every key without matching principals again
// (issue #25: each examined key of a SCAN matched every rule's
// client-id globs against the caller's id), agree with the rules, and
// say why they refuse; a name longer than MaxIdentityBytes matches no
// rule.
func TestGrantsAreResolvedOncePerIdentity(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	alice := &Identity{clientID: "x", username: "alice"}
	g := p.GrantsFor(alice)
	_, work := p.resolves.Load(), p.principalWork.Load()
	for _, k := range []string{"exact", "\x00\xff", "\x00\x01", "pub/a", "other"} {
		for _, need := range []access{accessRead, accessWrite} {
			if got, want := g.allows([]byte(k), need), p.allows(alice, []byte(k), need); got != want {
				t.Errorf("%q need %d: grants say %v, the rules %v", k, need, got, want)
			}
		}
	}
	before := p.principalWork.Load()
	for range 1000 {
		g.MayRead([]byte("pub/a"))
		g.Refusal([][]byte{[]byte("GET"), []byte("exact")})
	}
	if p.principalWork.Load() != before || before == work {
		t.Errorf("principal work %d → %d → %d: grants matched principals again", work, before, p.principalWork.Load())
	}
	if got, want := g.Refusal([][]byte{[]byte("GET"), []byte("exact")}), `rule 2 names client "x", user "alice" but grants no Read on this key`; got != want {
		t.Errorf("refusal %q, want %q", got, want)
	}
	long := &Identity{clientID: "admin", certNames: []string{strings.Repeat("w", MaxIdentityBytes+1) + "writer.example"}}
	if lg := p.GrantsFor(long); len(lg.naming) != 1 || lg.naming[0] != 3 {
		t.Errorf("rules naming a long certificate name: %v, want only rule 3 (by client id)", lg.naming)
	}
	if got := p.GrantsFor(&Identity{clientID: strings.Repeat("é", 100)}).Refusal([][]byte{[]byte("GET"), []byte("k")}); len(got) > 200 || !strings.Contains(got, "...") {
		t.Errorf("refusal %q: the client id is not clipped", got)
	}
	if c := p.GrantsFor(&Identity{clientID: "reader-1"}).ReadCost(100); c < 101 {
		t.Errorf("readCost(100) = %d for one read glob, want at least 101", c)
	}
}

// MayWriteEvery needs a rule naming the principal that grants write on
// keyType pattern "*": reading every key, or writing many, is not enough.
func TestPolicyMayWriteEvery(t *testing.T) {
	p, err := ParsePolicy([]byte(testPolicy + `
  - principals:
      clientIds: ["viewer"]
    stateStoreResources:
      - keyType: pattern
        keys: ["*"]
        method: Read
      - keyType: string
        keys: ["*"]
        method: Write
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pr   Principal
		want bool
	}{
		{Principal{ClientID: "admin"}, true},
		{Principal{ClientID: "reader-1"}, false},
		{Principal{ClientID: "x", Username: "alice"}, false},
		{Principal{ClientID: "viewer"}, false},
		{Principal{ClientID: "nobody"}, false},
	} {
		if got := p.MayWriteEvery(c.pr); got != c.want {
			t.Errorf("%+v: %v, want %v", c.pr, got, c.want)
		}
	}
}
