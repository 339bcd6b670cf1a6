package server

import (
	"errors"
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
	reader := &identity{clientID: "reader-1"}
	alice := &identity{clientID: "x", username: "alice"}
	cert := &identity{clientID: "y", certNames: []string{"other", "writer.example"}}
	admin := &identity{clientID: "admin"}
	nobody := &identity{clientID: "nobody", username: "bob"}
	for _, tc := range []struct {
		who  string
		id   *identity
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
		{"unverified user name", &identity{clientID: "z"}, []string{"SET", "exact", "v"}, false},
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
