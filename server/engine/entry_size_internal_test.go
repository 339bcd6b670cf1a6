package engine

import (
	"testing"
	"time"
	"unsafe"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// TestEntryFitsEightyBytes: an entry is allocated in Go's 80-byte size
// class (one more byte is the 96-byte class: 16 MB more for a million
// keys, the restart heap's bound).
func TestEntryFitsEightyBytes(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 80 {
		t.Fatalf("entry is %d bytes, want at most 80", n)
	}
}

// TestEntryMetaIsSharedOnlyWhileEmpty: a durable key with no token and
// no deadline points at the shared durableOnly; giving it either makes
// its own copy (the shared one is never written), and taking them away
// goes back to the shared one (or none for a key that is not durable).
func TestEntryMetaIsSharedOnlyWhileEmpty(t *testing.T) {
	e := New(Config{})
	tok := hlc.HLC{Wall: 5, Node: "n"}
	a, b := &entry{key: "a"}, &entry{key: "b"}
	a.setDurable(true)
	b.setDurable(true)
	if a.meta != durableOnly || b.meta != durableOnly {
		t.Fatal("durable keys without token or deadline do not share durableOnly")
	}
	a.setFence(tok)
	e.setDeadline(b, time.Unix(100, 0), true)
	if *durableOnly != (entryMeta{durable: true}) {
		t.Fatalf("durableOnly was written: %+v", *durableOnly)
	}
	if a.meta == durableOnly || !a.durable() || a.fenceToken() != tok || b.meta == durableOnly || !b.durable() || !b.deadline().Equal(time.Unix(100, 0)) {
		t.Fatalf("a %+v, b %+v", *a.meta, *b.meta)
	}
	a.setFence(hlc.HLC{})
	e.setDeadline(b, time.Time{}, false)
	if a.meta != durableOnly || b.meta != durableOnly {
		t.Fatal("emptied metas are not the shared one again")
	}
	a.setDurable(false)
	if a.meta != nil || a.durable() || a.fenced() || a.hasTTL() {
		t.Fatalf("a key with nothing keeps a meta: %+v", a.meta)
	}
	if !b.durable() || *durableOnly != (entryMeta{durable: true}) {
		t.Fatal("unsetting one key's durability changed another's")
	}
}

// TestSetDurableAllocatesNothingWithoutTokenOrDeadline: marking a restored
// key durable costs no allocation (a million keys at start would each
// allocate a meta only to drop it).
func TestSetDurableAllocatesNothingWithoutTokenOrDeadline(t *testing.T) {
	ent := &entry{key: "k"}
	if n := testing.AllocsPerRun(100, func() {
		ent.setDurable(true)
		ent.setFence(hlc.HLC{})
		ent.setDurable(false)
	}); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
