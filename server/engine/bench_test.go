package engine

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// benchEngine runs on a fake clock that never moves, the worst case for the
// HLC (every version is a counter increment).
func benchEngine(b *testing.B, cfg Config) *Engine {
	b.Helper()
	cfg.Now = NewFakeClock(t0).Now
	return New(cfg)
}

func benchReq(a ...string) Request {
	args := make([][]byte, len(a))
	for i, s := range a {
		args[i] = []byte(s)
	}
	return Request{Args: args, Client: "bench", HasTimestamp: true, Timestamp: "1696374425000:0:bench"}
}

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key/" + strconv.Itoa(i))
	}
	return keys
}

func BenchmarkSet(b *testing.B) {
	e := benchEngine(b, Config{})
	req := benchReq("SET", "key", "a value of some thirty bytes..")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkSetManyKeys(b *testing.B) {
	e := benchEngine(b, Config{})
	keys := benchKeys(10000)
	req := benchReq("SET", "", "a value of some thirty bytes..")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req.Args[1] = keys[i%len(keys)]
		e.Handle(req)
		i++
	}
}

func BenchmarkSetNXFails(b *testing.B) {
	e := benchEngine(b, Config{})
	e.Handle(benchReq("SET", "key", "v"))
	req := benchReq("SET", "key", "v", "NX")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkSetNEXPX(b *testing.B) {
	e := benchEngine(b, Config{})
	req := benchReq("SET", "lock", "holder", "NEX", "PX", "10000")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkSetFenced(b *testing.B) {
	e := benchEngine(b, Config{})
	req := benchReq("SET", "key", "v")
	req.HasFencingToken, req.FencingToken = true, "1696374425000:1:StateStore"
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkSetWatched(b *testing.B) {
	for _, watchers := range []int{1, 10} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			sent := 0
			e := benchEngine(b, Config{OnNotify: func(Notification) { sent++ }})
			for i := range watchers {
				r := benchReq("KEYNOTIFY", "key")
				r.Client = "w" + strconv.Itoa(i)
				e.Handle(r)
			}
			req := benchReq("SET", "key", "a value of some thirty bytes..")
			b.ReportAllocs()
			for b.Loop() {
				e.Handle(req)
			}
		})
	}
}

func BenchmarkGetHit(b *testing.B) {
	e := benchEngine(b, Config{})
	e.Handle(benchReq("SET", "key", "a value of some thirty bytes.."))
	req := benchReq("GET", "key")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkGetMiss(b *testing.B) {
	e := benchEngine(b, Config{})
	req := benchReq("GET", "key")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkDel(b *testing.B) {
	e := benchEngine(b, Config{})
	set, del := benchReq("SET", "key", "v"), benchReq("DEL", "key")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(set)
		e.Handle(del)
	}
}

func BenchmarkDelAbsent(b *testing.B) {
	e := benchEngine(b, Config{})
	req := benchReq("DEL", "key")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkVdelMismatch(b *testing.B) {
	e := benchEngine(b, Config{})
	e.Handle(benchReq("SET", "key", "v"))
	req := benchReq("VDEL", "key", "w")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

func BenchmarkKeynotify(b *testing.B) {
	e := benchEngine(b, Config{})
	on, off := benchReq("KEYNOTIFY", "key"), benchReq("KEYNOTIFY", "key", "STOP")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(on)
		e.Handle(off)
	}
}

func BenchmarkScan(b *testing.B) {
	e := benchEngine(b, Config{})
	for _, k := range benchKeys(1000) {
		e.Put(k, nil, PutOptions{})
	}
	req := benchReq("SCAN", "key/1*")
	b.ReportAllocs()
	for b.Loop() {
		e.Handle(req)
	}
}

// BenchmarkExpire measures active expiry per expired key among 10,000.
func BenchmarkExpire(b *testing.B) {
	clock := NewFakeClock(t0)
	e := New(Config{Now: clock.Now})
	keys := benchKeys(10000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i, k := range keys {
			e.Put(k, nil, PutOptions{TTL: time.Duration(i+1) * time.Millisecond})
		}
		clock.Advance(time.Duration(len(keys)) * time.Millisecond)
		b.StartTimer()
		e.Expire()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

func BenchmarkHandleParallel(b *testing.B) {
	e := benchEngine(b, Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		set, get := benchReq("SET", "key", "v"), benchReq("GET", "key")
		for pb.Next() {
			e.Handle(set)
			e.Handle(get)
		}
	})
}
