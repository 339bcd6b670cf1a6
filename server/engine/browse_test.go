package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func browseEngine(t *testing.T, keys ...string) *Engine {
	t.Helper()
	e := New(Config{Now: NewFakeClock(t0).Now})
	for _, k := range keys {
		if err := e.Put([]byte(k), []byte("v-"+k), PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func itemNames(p BrowsePage) []string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Key)
	}
	return out
}

// browseAll follows Next to the end and returns every item.
func browseAll(t *testing.T, e *Engine, o BrowseOptions) []string {
	t.Helper()
	var out []string
	for range 10000 {
		p := e.Browse(o)
		out = append(out, itemNames(p)...)
		if p.Next == "" {
			return out
		}
		if p.Next <= o.From {
			t.Fatalf("Next %q does not move past From %q", p.Next, o.From)
		}
		o.From = p.Next
	}
	t.Fatal("Browse never ended")
	return nil
}

func TestBrowse(t *testing.T) {
	keys := []string{"a", "a!x", "a/b", "a/b/c", "a/b/d", "a/c", "a/d/e/f", "b", "b/x", "secret/1", "secret/2", "z"}
	hideSecret := func(k []byte) bool { return !strings.HasPrefix(string(k), "secret/") }
	onlySecret2 := func(k []byte) bool { return string(k) == "secret/2" || !strings.HasPrefix(string(k), "secret/") }
	cases := []struct {
		name string
		o    BrowseOptions
		want []string
	}{
		{"top level as a tree", BrowseOptions{Folders: true}, []string{"a", "a!x", "a/", "b", "b/", "secret/", "z"}},
		{"one level down", BrowseOptions{Folders: true, Prefix: "a/"}, []string{"a/b", "a/b/", "a/c", "a/d/"}},
		{"two levels down", BrowseOptions{Folders: true, Prefix: "a/b/"}, []string{"a/b/c", "a/b/d"}},
		{"flat", BrowseOptions{Prefix: "a/"}, []string{"a/b", "a/b/c", "a/b/d", "a/c", "a/d/e/f"}},
		{"glob", BrowseOptions{Pattern: "a/*/[cd]"}, []string{"a/b/c", "a/b/d"}},
		{"glob ignores folders", BrowseOptions{Pattern: "*/*", Folders: true}, []string{"a/b", "a/b/c", "a/b/d", "a/c", "a/d/e/f", "b/x", "secret/1", "secret/2"}},
		{"glob and prefix", BrowseOptions{Pattern: "*x", Prefix: "b"}, []string{"b/x"}},
		{"glob outside prefix", BrowseOptions{Pattern: "a*", Prefix: "b"}, nil},
		{"hidden folder is not listed", BrowseOptions{Folders: true, Visible: hideSecret}, []string{"a", "a!x", "a/", "b", "b/", "z"}},
		{"folder with one visible key is", BrowseOptions{Folders: true, Visible: onlySecret2}, []string{"a", "a!x", "a/", "b", "b/", "secret/", "z"}},
		{"hidden keys in a glob", BrowseOptions{Pattern: "secret/*", Visible: onlySecret2}, []string{"secret/2"}},
		{"page size one", BrowseOptions{Folders: true, Limit: 1}, []string{"a", "a!x", "a/", "b", "b/", "secret/", "z"}},
	}
	e := browseEngine(t, keys...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := browseAll(t, e, c.o); !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestBrowseItemsCarryMetadata(t *testing.T) {
	e := browseEngine(t)
	if err := e.Put([]byte("k"), []byte("12345"), PutOptions{TTL: time.Minute, FencingToken: hlc.HLC{Wall: 1, Node: "n"}}); err != nil {
		t.Fatal(err)
	}
	p := e.Browse(BrowseOptions{})
	if len(p.Items) != 1 {
		t.Fatalf("items %+v", p.Items)
	}
	it := p.Items[0]
	if it.Size != 5 || it.Version.IsZero() || !it.Deadline.Equal(t0.Add(time.Minute)) || !it.Fenced || it.Folder {
		t.Fatalf("item %+v", it)
	}
}

// TestBrowseBoundsWork: a glob that matches nothing in 100,000 keys is
// answered in pages that each examine at most browseExamine keys;
// following Next reaches the end. A folder whose 100,000 keys are all
// hidden but one is one page naming no hidden key: the hidden keys are
// walked past in chunks, not in pages.
func TestBrowseBoundsWork(t *testing.T) {
	e := New(Config{Now: NewFakeClock(t0).Now})
	for i := range 100000 {
		_ = e.Put(fmt.Appendf(nil, "big/%06d", i), []byte("v"), PutOptions{})
	}
	_ = e.Put([]byte("big/zz"), []byte("v"), PutOptions{})
	o := BrowseOptions{Pattern: "*zz"}
	pages, found := 0, []string{}
	for {
		p := e.Browse(o)
		pages++
		if p.Examined > browseExamine {
			t.Fatalf("a page examined %d keys", p.Examined)
		}
		found = append(found, itemNames(p)...)
		if p.Next == "" {
			break
		}
		o.From = p.Next
	}
	if !slices.Equal(found, []string{"big/zz"}) || pages < 100000/browseExamine {
		t.Fatalf("%+v: found %q in %d pages", o, found, pages)
	}
	only := func(k []byte) bool { return string(k) == "big/zz" }
	for _, o := range []BrowseOptions{{Folders: true, Visible: only}, {Prefix: "big/", Visible: only}, {Pattern: "big/*", Visible: only, Limit: 1}} {
		p := e.Browse(o)
		want := []string{"big/zz"}
		if o.Folders {
			want = []string{"big/"}
		}
		if !slices.Equal(itemNames(p), want) || p.Examined != 1 || p.Next != "" {
			t.Fatalf("%+v: page %+v", o, p)
		}
	}
	// A visible folder of 100,000 keys costs one key and a seek.
	p := e.Browse(BrowseOptions{Folders: true})
	if !slices.Equal(itemNames(p), []string{"big/"}) || p.Examined != 1 || p.Next != "" {
		t.Fatalf("page %+v", p)
	}
}

// TestBrowseHiddenKeysLeaveNoTrace reproduces the console's oracle (issue
// #25): Next named the hidden key where a page stopped, and Examined
// counted hidden keys, so a prefix holding only hidden keys answered
// differently from an empty one and every hidden name could be recovered
// by bisection. Every page under Visible must equal the page of a store
// that holds only the visible keys (names, folders, sizes, Next,
// Examined), whatever the prefix, glob, From or limit, with hidden runs
// longer than a chunk.
func TestBrowseHiddenKeysLeaveNoTrace(t *testing.T) {
	visible := []string{"a", "a/b", "a/c/d", "m", "m/x", "pub/1", "pub/2", "z"}
	var hidden []string
	for i := range 2*browseExamine + 10 {
		hidden = append(hidden, fmt.Sprintf("m/secret/%05d", i), fmt.Sprintf("hid/%05d", i))
	}
	hidden = append(hidden, "a/b0", "pub/10", "zz", "m/x/y")
	isHidden := map[string]bool{}
	for _, k := range hidden {
		isHidden[k] = true
	}
	full := browseEngine(t, append(slices.Clone(visible), hidden...)...)
	bare := browseEngine(t, visible...)
	vis := func(k []byte) bool { return !isHidden[string(k)] }
	type shown struct {
		Items    []string
		Next     string
		Examined int
	}
	show := func(p BrowsePage) shown {
		s := shown{Next: p.Next, Examined: p.Examined}
		for _, it := range p.Items {
			s.Items = append(s.Items, fmt.Sprintf("%s folder=%v size=%d", it.Key, it.Folder, it.Size))
		}
		return s
	}
	var opts []BrowseOptions
	for _, prefix := range []string{"", "a/", "hid/", "hid/0", "m/", "m/s", "m/secret/", "m/x/", "pub/", "pub/1", "z"} {
		for _, from := range []string{"", "a/b0", "hid/00100", "m/secret/00005", "m/x", "pub/10", "zz"} {
			for _, limit := range []int{1, 2, 100} {
				for _, folders := range []bool{false, true} {
					opts = append(opts, BrowseOptions{Prefix: prefix, From: from, Limit: limit, Folders: folders})
				}
			}
		}
	}
	for _, q := range []string{"*", "hid/*", "m/*", "*secret*", "pub/1*", "*/x*"} {
		for _, limit := range []int{1, 3} {
			opts = append(opts, BrowseOptions{Pattern: q, Limit: limit})
		}
	}
	for _, o := range opts {
		want := show(bare.Browse(o))
		o.Visible = vis
		got := show(full.Browse(o))
		if !slices.Equal(got.Items, want.Items) || got.Next != want.Next || got.Examined != want.Examined {
			t.Fatalf("%+v:\n got %+v\nwant %+v", o, got, want)
		}
		if isHidden[got.Next] {
			t.Fatalf("%+v: Next names the hidden key %q", o, got.Next)
		}
	}
}

func TestOnChange(t *testing.T) {
	var got []string
	clock := NewFakeClock(t0)
	e := New(Config{Now: clock.Now, OnChange: func(k string, del bool) { got = append(got, fmt.Sprintf("%s %v", k, del)) }})
	_ = e.Put([]byte("a"), []byte("1"), PutOptions{TTL: time.Second})
	_ = e.Put([]byte("b"), []byte("1"), PutOptions{})
	e.Delete([]byte("b"))
	clock.Advance(2 * time.Second)
	e.Expire()
	if want := []string{"a false", "b false", "b true", "a true"}; !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestWhy(t *testing.T) {
	h := newHarness(t, Config{})
	lock := tsAt(0, 5, "StateStore")
	canon := func(s string) string { h, _ := hlc.Parse(s); return h.String() }
	h.run(step{args: args("SET k v"), ft: lock, want: ok, wantTS: true})
	cases := []struct {
		s    step
		want string
	}{
		{step{args: args("SET k w"), want: errp(ErrFencingTokenRequired)}, "the key is fenced by token " + canon(lock) + " and the request carried no __ft"},
		{step{args: args("DEL k"), ft: tsAt(0, 1, "StateStore"), want: errp(ErrFencingTokenLowerVersion)}, "request __ft " + canon(tsAt(0, 1, "StateStore")) + " is lower than the key's fencing token " + canon(lock)},
		{step{args: args("GET k"), ts: tsAt(2*time.Minute, 0, "c"), want: errp(ErrTimestampSkew)}, "__ts " + tsAt(2*time.Minute, 0, "c") + " is 2m0s ahead of the server clock; at most 55s is accepted"},
		{step{args: args("SET k v"), noTS: true, want: errp(ErrMissingTimestamp)}, "SET without a __ts"},
		{step{args: args("SET k v"), want: errp(ErrFencingTokenSkew), ft: tsAt(time.Hour, 0, "c")}, "__ft " + tsAt(time.Hour, 0, "c") + " is 1h0m0s ahead of the server clock; at most 55s is accepted"},
		{step{args: args("GET k"), want: "$1\r\nv\r\n", wantTS: true}, ""},
	}
	for _, c := range cases {
		if res := h.run(c.s); res.Why != c.want {
			t.Errorf("%q: Why %q, want %q", c.s.args, res.Why, c.want)
		}
	}
}

func TestWatching(t *testing.T) {
	h := newHarness(t, Config{})
	for _, k := range []string{"c", "a", "b"} {
		h.run(step{args: []string{"KEYNOTIFY", k}, want: ok, wantTS: true})
	}
	h.run(step{client: "other", args: args("KEYNOTIFY a"), want: ok, wantTS: true})
	if n := h.eng.WatchCount(); n != 4 {
		t.Fatalf("WatchCount %d", n)
	}
	n, keys := h.eng.Watching("Client1", 2)
	if n != 3 || !slices.Equal(keys, []string{"a", "b"}) {
		t.Fatalf("Watching: %d %q", n, keys)
	}
}
