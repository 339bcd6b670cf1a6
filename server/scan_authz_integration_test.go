package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// scanAuthzPolicy gives "reader-*" clients a/* and everyone else nothing
// through four infix client-id globs, the kind that cost a pass over the
// whole id per rule.
const scanAuthzPolicy = `
rules:
  - principals: {clientIds: ["reader-*"]}
    stateStoreResources: [{keyType: pattern, keys: ["a/*"], method: Read}]
  - principals: {clientIds: ["*x*y*", "*q*z*", "*[0-9]*w*", "*k*j*"]}
    stateStoreResources: [{keyType: pattern, keys: ["b/*"], method: ReadWrite}]
  - principals: {clientIds: ["owner"]}
    stateStoreResources: [{keyType: pattern, keys: ["*"], method: ReadWrite}]
`

// scanPages walks SCAN pattern and returns the keys and the tokens.
func scanPages(t *testing.T, c *client, pattern string, between func()) (keys, tokens []string) {
	t.Helper()
	a := []string{"SCAN", pattern}
	for range 10_000 {
		p := c.do(a...)
		v, err := resp3.ParseResponse(p.Payload)
		if err != nil || v.Kind != resp3.KindArray || len(v.Elems) == 0 || len(v.Elems) > 2 {
			t.Fatalf("SCAN answered %.80q: %v", p.Payload, err)
		}
		for _, k := range v.Elems[0].Elems {
			keys = append(keys, string(k.Str))
		}
		if len(v.Elems) == 1 {
			return keys, tokens
		}
		tokens = append(tokens, string(v.Elems[1].Str))
		a = []string{"SCAN", pattern, tokens[len(tokens)-1]}
		if between != nil {
			between()
		}
	}
	t.Fatal("SCAN does not end")
	return nil, nil
}

// Issue #25, items 3 and 4, over MQTT against the embedded broker with
// authorization rules. A client allowed a/* pages through "*" over 9,000
// other keys with the longest client id the rules accept: its tokens name
// none of them, and neither a client of other rules nor another pattern
// can use them; the rules' principal globs are matched against its id once for
// the connection, not once per key examined (a 60 KiB id and four infix
// globs held the engine lock for 12 s); every page is followed by another
// client's GET, answered; and a longer id is refused at CONNECT.
func TestScanUnderAuthorizationLeaksNoKeyAndMatchesPrincipalsOnce(t *testing.T) {
	pol, err := server.ParsePolicy([]byte(scanAuthzPolicy))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{AllowAnonymous: true, Authorization: pol})})
	eng := e.srv.Engine()
	var want, hidden []string
	for i := range 10_000 {
		k := fmt.Sprintf("b/secret-%05d", i)
		if i%1000 == 0 {
			k = fmt.Sprintf("a/%05d", i)
			want = append(want, k)
		} else {
			hidden = append(hidden, k)
		}
		if err := eng.Put([]byte(k), []byte("v"), engine.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The longest id: "reader-" and then bytes that make every infix glob
	// run to the end without matching.
	id := "reader-" + strings.Repeat("x0q", (server.MaxIdentityBytes-7)/3)
	if _, ack, err := connectAs(t, e, id+strings.Repeat("x", server.MaxIdentityBytes-len(id)+1), nil, "", ""); err == nil || connackCode(ack) != 0x85 {
		t.Fatalf("a client id of %d bytes: err %v, CONNACK %#x; want it refused with 0x85", server.MaxIdentityBytes+1, err, connackCode(ack))
	}
	if _, ack, err := connectAs(t, e, "reader-"+strings.Repeat("x0q", 20<<10), nil, "", ""); err == nil || connackCode(ack) != 0x85 {
		t.Fatalf("issue #25's 60 KiB client id: err %v, CONNACK %#x; want it refused with 0x85", err, connackCode(ack))
	}
	if _, ack, err := connectAs(t, e, "reader-u", nil, strings.Repeat("u", server.MaxIdentityBytes+1), "pw"); err == nil || connackCode(ack) != 0x86 {
		t.Fatalf("a user name of %d bytes: err %v, CONNACK %#x; want it refused with 0x86", server.MaxIdentityBytes+1, err, connackCode(ack))
	}
	attacker := mustConnect(t, e, id, nil, "", "")
	owner := mustConnect(t, e, "owner", nil, "", "")
	checkResponse(t, owner.do("SET", "k", "v"), "+OK\r\n", true)
	resolves0, work0 := server.PolicyWork(pol)

	gets := 0
	keys, tokens := scanPages(t, attacker, "*", func() {
		checkResponse(t, owner.do("GET", "k"), "$1\r\nv\r\n", true)
		gets++
	})
	if !slices.Equal(keys, want) {
		t.Fatalf("listed %q, want %q", keys, want)
	}
	if len(tokens) < 2 || gets != len(tokens) {
		t.Fatalf("%d tokens, %d GETs between pages: the walk did not page", len(tokens), gets)
	}
	for _, tok := range tokens {
		for _, k := range hidden {
			if strings.Contains(tok, "secret") || strings.Contains(strings.ToLower(tok), fmt.Sprintf("%x", k)) {
				t.Fatalf("token %q names %q", tok, k)
			}
		}
	}

	// Principal matching: once per connection (the attacker's and the
	// owner's), each bounded by the rules' globs over the longest id.
	resolves, work := server.PolicyWork(pol)
	if resolves-resolves0 > 2 {
		t.Errorf("grants resolved %d times during the walk, want at most once per connection", resolves-resolves0)
	}
	perID := 0
	for _, g := range []string{"reader-*", "*x*y*", "*q*z*", "*[0-9]*w*", "*k*j*", "owner"} {
		perID += glob.Compile(g).Cost(server.MaxIdentityBytes)
	}
	t.Logf("walk of %d keys in %d requests: %d grant resolutions, principal matching %d units (bound %d)", len(want)+len(hidden), len(tokens)+1, resolves-resolves0, work-work0, 2*perID)
	if work-work0 > int64(2*perID) {
		t.Errorf("principal matching cost %d during the walk, want at most %d (two identities)", work-work0, 2*perID)
	}

	// A client named by other rules, or another pattern, cannot use the
	// tokens; a client named by the same rules (it may read the same
	// keys) may.
	const invalid = "-ERR invalid continuation token\r\n"
	checkResponse(t, owner.do("SCAN", "*", tokens[0]), invalid, false)
	if p := mustConnect(t, e, "reader-2", nil, "", "").do("SCAN", "*", tokens[0]); strings.HasPrefix(string(p.Payload), "-") {
		t.Fatalf("a client of the same rules resuming: %q", p.Payload)
	}
	checkResponse(t, attacker.do("SCAN", "b/*", tokens[0]), invalid, false)
	checkResponse(t, attacker.do("SCAN", "*", tokens[0]+"A"), invalid, false)
}
