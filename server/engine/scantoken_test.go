package engine

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime/resp3"
)

// Issue #25's attack: a client that may read only a/* pages through '*'
// over a store of other users' keys. Its tokens used to be the hex of the
// last key examined, hidden or not. Now no token holds a hidden key's
// name in any form, tokens of hidden positions look like any other, and
// the walk still lists every visible key once.
func TestScanTokensNameNoHiddenKey(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 3
	var hidden, want []string
	for i := range 40 {
		k := fmt.Sprintf("b/secret-%02d", i)
		if i%10 == 0 {
			k = fmt.Sprintf("a/%02d", i)
			want = append(want, k)
		} else {
			hidden = append(hidden, k)
		}
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	visible := func(k []byte) bool { return bytes.HasPrefix(k, []byte("a/")) }
	var got, tokens []string
	a := []string{"SCAN", "*"}
	for range 100 {
		req := h.request(step{args: a})
		req.Visible = visible
		v, err := resp3.ParseResponse(h.eng.Handle(req).Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range v.Elems[0].Elems {
			got = append(got, string(k.Str))
		}
		if len(v.Elems) == 1 {
			break
		}
		tok := string(v.Elems[1].Str)
		tokens = append(tokens, tok)
		a = []string{"SCAN", "*", tok}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if len(tokens) < 10 {
		t.Fatalf("only %d tokens: the walk did not stop on hidden keys", len(tokens))
	}
	for _, tok := range tokens {
		if len(tok) != len(tokens[0]) {
			t.Errorf("token lengths differ (%d, %d): they tell key lengths apart", len(tok), len(tokens[0]))
		}
		for _, k := range hidden {
			for _, form := range []string{k, hex.EncodeToString([]byte(k)), strings.ToUpper(hex.EncodeToString([]byte(k))), "secret"} {
				if strings.Contains(tok, form) {
					t.Fatalf("token %q holds %q", tok, form)
				}
			}
		}
	}
}

// A token is good in the scope it was given in (the authorization rules
// that name the client), for the pattern it was given for and with the
// engine that made it; anything else, including any change to it, is
// refused with ErrInvalidToken. Another client id in the same scope may
// use it (a CLI resuming a listing in a new process, with a new id).
func TestScanRefusesTokensNotIssuedForTheRequest(t *testing.T) {
	h := newHarness(t, Config{})
	h.eng.scanLim.examine = 1
	for _, k := range []string{"a/1", "a/2", "a/3"} {
		h.eng.Put([]byte(k), nil, PutOptions{})
	}
	res := h.do(step{args: args("SCAN a/*")})
	v, err := resp3.ParseResponse(res.Payload)
	if err != nil || len(v.Elems) != 2 {
		t.Fatalf("first page %q: %v", res.Payload, err)
	}
	tok := string(v.Elems[1].Str)
	h.run(step{args: []string{"SCAN", "a/*", tok}, want: "*2\r\n*1\r\n" + bulk("a/2") + bulk(h.tok("a/*", "a/2")), wantTS: true})
	refused := errp(ErrInvalidToken)
	h.run(step{client: "Client2", args: []string{"SCAN", "a/*", tok}, want: "*2\r\n*1\r\n" + bulk("a/2") + bulk(h.tok("a/*", "a/2")), wantTS: true})
	req := h.request(step{args: []string{"SCAN", "a/*", tok}})
	req.TokenScope = "authz:2,"
	if got := string(h.eng.Handle(req).Payload); got != refused {
		t.Fatalf("a token used in another scope: %q, want %q", got, refused)
	}
	req = h.request(step{args: []string{"SCAN", "a/*"}})
	req.TokenScope = "authz:2,"
	res = h.eng.Handle(req)
	if v, err := resp3.ParseResponse(res.Payload); err != nil || len(v.Elems) != 2 {
		t.Fatalf("first page in scope authz:2,: %q", res.Payload)
	} else {
		h.run(step{args: []string{"SCAN", "a/*", string(v.Elems[1].Str)}, want: refused})
	}
	h.run(step{args: []string{"SCAN", "*", tok}, want: refused})
	h.run(step{args: []string{"SCAN", "a/?", tok}, want: refused})
	other := newHarness(t, Config{})
	other.eng.Put([]byte("a/1"), nil, PutOptions{})
	other.run(step{args: []string{"SCAN", "a/*", tok}, want: refused})
	for i := range tok {
		for _, c := range []byte{'A', '_', '-', '0'} {
			if tok[i] == c {
				continue
			}
			bad := tok[:i] + string(c) + tok[i+1:]
			h.run(step{args: []string{"SCAN", "a/*", bad}, want: refused})
		}
	}
	for _, bad := range []string{tok[:len(tok)-1], tok + "A", tok + "\n", "\n" + tok, tok + "=", tok[:len(tok)/2]} {
		h.run(step{args: []string{"SCAN", "a/*", bad}, want: refused})
	}
}

// Tokens are deterministic (a position gives one token), so a client that
// pages again from the start sees the same tokens. Issue #25 (F3): their
// length told a hidden key's length to within 64 bytes (123 characters
// for a 12-byte key, 550 for a 306-byte one); now every key of up to
// about 1 KiB gives a token of one length, and a longer one its length
// to within a factor of two.
func TestScanTokenSizes(t *testing.T) {
	s := newTokenSealer()
	if a, b := s.seal("c", []byte("*"), "k"), s.seal("c", []byte("*"), "k"); a != b {
		t.Fatalf("two tokens for one position: %q, %q", a, b)
	}
	size := func(n int) int { return len(s.seal("c", []byte("*"), strings.Repeat("k", n))) }
	for _, n := range []int{1, 12, 306, tokenMinPlain - binaryLenBound} {
		if size(n) != size(1) {
			t.Errorf("keys of 1 and %d bytes give tokens of %d and %d bytes", n, size(1), size(n))
		}
	}
	for _, tc := range []struct{ a, b int }{
		{tokenMinPlain - binaryLenBound + 1, 2*tokenMinPlain - binaryLenBound},
		{3 * tokenMinPlain, 4*tokenMinPlain - binaryLenBound},
		{tokenStepPlain + 1, 2*tokenStepPlain - binaryLenBound},
	} {
		if size(tc.a) != size(tc.b) {
			t.Errorf("keys of %d and %d bytes give tokens of %d and %d bytes", tc.a, tc.b, size(tc.a), size(tc.b))
		}
	}
	for _, n := range []int{1, 1500, 5000, tokenStepPlain + 1} {
		tok := s.seal("c", []byte("*"), strings.Repeat("k", n))
		if k, ok := s.open("c", []byte("*"), []byte(tok)); !ok || len(k) != n {
			t.Errorf("token of a %d-byte key: opened %v, %d bytes", n, ok, len(k))
		}
	}
}

// binaryLenBound is the uvarint length prefix's room in the first pad
// block (seal reserves binary.MaxVarintLen64).
const binaryLenBound = 10

// FuzzScanToken feeds the token decoder arbitrary bytes: it never panics,
// and whatever it accepts is exactly a token seal makes (no other text
// maps onto a position).
func FuzzScanToken(f *testing.F) {
	var k [64]byte
	s := newTokenSealerFrom(k)
	good := s.seal("c", []byte("a/*"), "a/1")
	f.Add("c", "a/*", good)
	f.Add("c", "a/*", good[:len(good)-2])
	f.Add("d", "a/*", good)
	f.Add("c", "*", s.seal("c", []byte("*"), strings.Repeat("x", 300)))
	f.Add("c", "*", "")
	f.Add("c", "*", "61")
	f.Add("c", "*", strings.Repeat("A", 120))
	f.Fuzz(func(t *testing.T, client, pattern, token string) {
		key, ok := s.open(client, []byte(pattern), []byte(token))
		if !ok {
			return
		}
		if key == "" {
			t.Fatal("accepted a token for the empty key")
		}
		if again := s.seal(client, []byte(pattern), key); again != token {
			t.Fatalf("accepted %q for key %q; seal makes %q", token, key, again)
		}
	})
}

// Issue #25 (F3), a known limit stated in docs/security.md: a request
// examines at most a budget of keys, hidden ones included, so a pattern
// whose range holds more hidden keys than that gets an empty page with a
// token, where fewer get the final empty page. The client learns about
// how many hidden keys lie in the range, and no name.
func TestScanEmptyPageWithATokenCountsHiddenKeysInBudgets(t *testing.T) {
	for _, tc := range []struct {
		hidden, pages int
	}{{4, 1}, {5, 2}, {9, 3}} {
		h := newHarness(t, Config{})
		h.eng.scanLim.examine = 4
		for i := range tc.hidden {
			h.eng.Put(fmt.Appendf(nil, "s/%02d", i), nil, PutOptions{})
		}
		a := []string{"SCAN", "s/*"}
		pages := 0
		for range 10 {
			req := h.request(step{args: a})
			req.Visible = func([]byte) bool { return false }
			v, err := resp3.ParseResponse(h.eng.Handle(req).Payload)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(v.Elems[0].Elems) != 0 {
				t.Fatalf("a hidden key was listed: %q", v.Elems[0].Elems[0].Str)
			}
			if len(v.Elems) == 1 {
				break
			}
			a = []string{"SCAN", "s/*", string(v.Elems[1].Str)}
		}
		if pages != tc.pages {
			t.Errorf("%d hidden keys, budget 4: %d pages, want %d", tc.hidden, pages, tc.pages)
		}
	}
}
