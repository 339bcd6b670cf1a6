package console

import (
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestRingReadsInOrderAndCountsWhatWasLapped(t *testing.T) {
	r := newRing[int](4)
	put := func(v int) {
		s, seq := r.begin()
		s.v = v
		s.end(seq)
	}
	for i := range 3 {
		put(i)
	}
	var got []int
	next, lost := r.read(0, func(_ uint64, v *int) bool { got = append(got, *v); return true })
	if next != 3 || lost != 0 || len(got) != 3 || got[2] != 2 {
		t.Fatalf("next %d lost %d got %v", next, lost, got)
	}
	for i := 3; i < 10; i++ {
		put(i)
	}
	got = got[:0]
	next, lost = r.read(next, func(_ uint64, v *int) bool { got = append(got, *v); return true })
	if next != 10 || lost != 3 || len(got) != 4 || got[0] != 6 {
		t.Fatalf("after lapping: next %d lost %d got %v", next, lost, got)
	}
}

// TestRingConcurrentWritersAndReaders runs under -race: writers never
// wait for readers beyond one slot copy, and every record a reader sees
// is whole.
func TestRingConcurrentWritersAndReaders(t *testing.T) {
	type rec struct{ a, b int }
	r := newRing[rec](64)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				s, seq := r.begin()
				s.v = rec{w*100000 + i, -(w*100000 + i)}
				s.end(seq)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var at uint64
	for {
		at, _ = r.read(at, func(_ uint64, v *rec) bool {
			if v.a != -v.b {
				t.Errorf("torn record %+v", *v)
			}
			return true
		})
		select {
		case <-done:
			return
		default:
		}
	}
}

func TestSummarize(t *testing.T) {
	for p, want := range map[string]string{
		"+OK\r\n": "OK", ":1\r\n": "1", ":-1\r\n": "-1", "$-1\r\n": "nil", "_\r\n": "nil",
		"$5\r\nhello\r\n": "5 B", "*1\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n": "2 keys", "-ERR x\r\n": "-ERR x", "": "",
	} {
		var tr traceRecord
		tr.status = 200
		tr.answer, tr.size = summarize([]byte(p))
		if tr.answer == answerError {
			tr.errText = []byte("x")
		}
		if got := tr.resultText(); got != want {
			t.Errorf("%q: %q, want %q", p, got, want)
		}
	}
}

// FuzzKeyForms: whatever bytes a key holds, its ref gives them back
// exactly, and its display is valid UTF-8 without control characters
// (it goes into the page as text, and into logs).
func FuzzKeyForms(f *testing.F) {
	for _, s := range []string{"plain/key", "", "a b", "\x00\xff", "é/ü", "line\nbreak", "%2F", "\u202e", "<script>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		back, err := url.QueryUnescape(ref(key))
		if err != nil || back != string(key) {
			t.Fatalf("ref %q gives back %q (%v)", ref(key), back, err)
		}
		d := display(key)
		if !utf8.ValidString(d) || strings.ContainsAny(d, "\x00\r\x1b") {
			t.Fatalf("display %q", d)
		}
		summarize(key)
		leadingInt(key)
	})
}
