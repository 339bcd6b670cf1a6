package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// Tests of the group commit (server/persist/commit.go) over MQTT against
// the embedded server. A commit hook holds a transaction on "disk" for as
// long as a test needs, so what is answered meanwhile, and what is not, is
// decided by the code, never by timing.

// diskGate holds the data file's transactions: while closed, each one
// waits in the commit hook until the test opens the gate (or fails it).
type diskGate struct {
	entered chan struct{} // one value per transaction that reached the hook
	open    chan error    // what the held transaction returns
	pass    atomic.Bool   // let transactions through without waiting
}

func newDiskGate(e *env) *diskGate {
	g := &diskGate{entered: make(chan struct{}, 64), open: make(chan error)}
	server.SetCommitHook(e.srv, func() error {
		if g.pass.Load() {
			return nil
		}
		g.entered <- struct{}{}
		return <-g.open
	})
	return g
}

// held waits until a transaction is held at the gate.
func (g *diskGate) held(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(wait):
		t.Fatal("no transaction reached the disk")
	}
}

// unblock lets every transaction pass, a held one included, if any (for
// a test that may fail while one is held).
func (g *diskGate) unblock() {
	g.pass.Store(true)
	for {
		select {
		case g.open <- nil:
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

// release lets the held transaction finish with err, and every later one
// pass.
func (g *diskGate) release(err error) {
	g.pass.Store(true)
	g.open <- err
}

func newDiskEnv(t *testing.T, opts ...func(*server.Options)) *env {
	return newDiskEnvOn(t, "", opts...)
}

// newDiskEnvOn is newDiskEnv attached to broker (embedded when "").
func newDiskEnvOn(t *testing.T, broker string, opts ...func(*server.Options)) *env {
	dir := t.TempDir()
	return newEnv(t, broker, append([]func(*server.Options){func(o *server.Options) { o.DataDir = dir }}, opts...))
}

// persisted is a request asking for persistence (aio-persistence=true),
// sent without waiting for its PUBACK (which comes with the answer).
func (c *client) persisted(args ...string) request {
	return request{payload: cmd(args...), unacked: true, user: paho.UserProperties{
		{Key: "__srcId", Value: c.id}, {Key: "__protVer", Value: "1.0"},
		{Key: "__ts", Value: c.e.stamp(0)}, {Key: "aio-persistence", Value: "true"},
	}}
}

// plain is a request without persistence, sent without waiting for its
// PUBACK.
func plain(args ...string) request { return request{payload: cmd(args...), unacked: true} }

// next returns the client's next response and checks it answers corr.
func (c *client) next(corr []byte) *paho.Publish {
	c.t.Helper()
	p := c.await()
	if string(p.Properties.CorrelationData) != string(corr) {
		c.t.Fatalf("%s: response %q to %x, want the answer to %x", c.id, p.Payload, p.Properties.CorrelationData, corr)
	}
	return p
}

// While a kept write is on disk, requests that depend on nothing pending
// are answered at once, from its own client as from others; what reveals
// the pending change (a GET or a SCAN, and the notification) waits for
// it, and is then answered with it. Both transports.
func TestGroupCommitHoldsOnlyWhatDependsOnThePendingChange(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { holdsOnlyWhatDepends(t, newDiskEnv(t)) })
	t.Run("mosquitto", func(t *testing.T) { holdsOnlyWhatDepends(t, newDiskEnvOn(t, mosquittoURL(t))) })
}

func holdsOnlyWhatDepends(t *testing.T, e *env) {
	gate := newDiskGate(e)
	a, b, w := e.connect("writer"), e.connect("reader"), e.connect("watcher")
	w.subscribeNotify()
	checkResponse(t, w.do("KEYNOTIFY", "k"), "+OK\r\n", true)

	setK := a.send(a.persisted("SET", "k", "v1"))
	gate.held(t)
	// The writer's own next request, memory-only, is not held behind it.
	checkResponse(t, a.next(a.send(plain("SET", "volatile", "x"))), "+OK\r\n", true)
	// Another client's GET of the pending key waits; its next request,
	// which reveals nothing pending, does not.
	getK := b.send(plain("GET", "k"))
	scan := b.send(plain("SCAN", "*"))
	checkResponse(t, b.next(b.send(plain("GET", "volatile"))), "$1\r\nx\r\n", true)
	checkResponse(t, b.next(b.send(plain("SET", "other", "y"))), "+OK\r\n", true)
	select {
	case p := <-w.other:
		t.Fatalf("notification of a change still on disk: %q", p.Payload)
	default:
	}

	gate.release(nil)
	v := checkResponse(t, a.next(setK), "+OK\r\n", true)
	if got := checkResponse(t, b.next(getK), "$2\r\nv1\r\n", true); got != v {
		t.Fatalf("GET k after the commit: version %s, want the SET's %s", got, v)
	}
	if p := b.next(scan); !strings.Contains(string(p.Payload), "$1\r\nk\r\n") {
		t.Fatalf("SCAN after the commit: %q", p.Payload)
	}
	if n := w.notification(); string(n.Payload) != "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$2\r\nv1\r\n" || props(t, n)["__ts"] != v {
		t.Fatalf("notification %q %v", n.Payload, props(t, n))
	}
}

// Kept writes that arrive while a transaction is on disk share the next
// one, and every answer comes in the order the engine decided.
func TestGroupCommitSharesTransactionsAndKeepsOrder(t *testing.T) {
	const clients, each = 4, 8
	e := newDiskEnv(t)
	gate := newDiskGate(e)
	first := e.connect("first")
	firstCorr := first.send(first.persisted("SET", "first", "0"))
	gate.held(t)
	cs := make([]*client, clients)
	corrs := make([][][]byte, clients)
	for i := range cs {
		cs[i] = e.connect(fmt.Sprintf("c%d", i))
		for j := range each {
			// The same key again and again: each answer reveals the one
			// before, so the order shows.
			corrs[i] = append(corrs[i], cs[i].send(cs[i].persisted("SET", fmt.Sprintf("k%d", i), fmt.Sprint(j))))
		}
	}
	waitFor(t, "every write decided", func() bool {
		for i := range cs {
			if ent, ok := e.srv.Engine().Lookup(fmt.Appendf(nil, "k%d", i)); !ok || string(ent.Value) != fmt.Sprint(each-1) {
				return false
			}
		}
		return true
	})
	gate.release(nil)
	checkResponse(t, first.next(firstCorr), "+OK\r\n", true)
	for i, c := range cs {
		var last string
		for j := range each {
			v := checkResponse(t, c.next(corrs[i][j]), "+OK\r\n", true)
			if v <= last {
				t.Fatalf("client %d answer %d: version %s not after %s", i, j, v, last)
			}
			last = v
		}
	}
	st := e.srv.Stats().Persist
	if st.Commits != 2 || st.Writes != 1+clients*each || st.Failures != 0 {
		t.Fatalf("persistence stats %+v, want 2 transactions holding %d writes", st, 1+clients*each)
	}
}

// A transaction that fails is undone: its writes, and everything decided
// while it was on disk, are answered with the persistence error and
// changed nothing (no notification either); a memory-only write that
// depended on nothing pending stands, and the next transaction works.
func TestGroupCommitFailureAnswersTheErrorAndChangesNothing(t *testing.T) {
	var (
		mu     sync.Mutex
		events []server.CommitEvent
	)
	e := newDiskEnv(t, func(o *server.Options) {
		o.OnCommit = func(ev server.CommitEvent) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}
	})
	a, b, w := e.connect("writer"), e.connect("reader"), e.connect("watcher")
	checkResponse(t, a.roundTrip(a.persisted("SET", "k", "old")), "+OK\r\n", true)
	w.subscribeNotify()
	checkResponse(t, w.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	gate := newDiskGate(e)

	setK := a.send(a.persisted("SET", "k", "new"))
	gate.held(t)
	getK := b.send(plain("GET", "k"))              // depends on it
	setK3 := b.send(b.persisted("SET", "k3", "x")) // decided while it is on disk
	checkResponse(t, b.next(b.send(plain("SET", "free", "1"))), "+OK\r\n", true)

	gate.release(errors.New("disk on fire"))
	persistErr := "-ERR " + string(engine.ErrPersistence) + "\r\n"
	checkResponse(t, a.next(setK), persistErr, false)
	checkResponse(t, b.next(getK), persistErr, false)
	checkResponse(t, b.next(setK3), persistErr, false)
	eng := e.srv.Engine()
	if ent, _ := eng.Lookup([]byte("k")); string(ent.Value) != "old" {
		t.Fatalf("k = %q, want old", ent.Value)
	}
	if _, ok := eng.Lookup([]byte("k3")); ok {
		t.Fatal("k3 stored by a failed transaction")
	}
	if ent, _ := eng.Lookup([]byte("free")); string(ent.Value) != "1" {
		t.Fatalf("free = %q: a write that depended on nothing was undone", ent.Value)
	}
	v := checkResponse(t, a.roundTrip(a.persisted("SET", "k", "newer")), "+OK\r\n", true)
	if n := w.notification(); !strings.HasSuffix(string(n.Payload), "$5\r\nnewer\r\n") || props(t, n)["__ts"] != v {
		t.Fatalf("first notification after the failure: %q (the failed change must not be notified)", n.Payload)
	}
	if st := e.srv.Stats().Persist; st.Failures != 1 || st.Commits != 2 || st.Writes != 2 {
		t.Fatalf("stats %+v, want 2 commits of 1 write each and 1 failure", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 3 || events[1].Err == nil || events[1].Writes != 1 || events[1].Changes != 1 || events[2].Err != nil {
		t.Fatalf("OnCommit events %+v, want a commit, the failed one (1 write), a commit", events)
	}
}

// A client that ignores its Receive Maximum cannot pile up answers
// waiting for the disk: past MaxInflight of them the server stops reading
// its connection until the disk catches up, then answers everything.
func TestGroupCommitBoundsTheAnswersOneClientHasWaiting(t *testing.T) {
	const inflight, sent = 2, 6
	e := newDiskEnv(t, withLimits(server.Limits{MaxInflight: inflight}), func(o *server.Options) { o.PersistAll = true })
	gate := newDiskGate(e)
	r := newRawSession(t, e, "greedy")
	const respTopic = "clients/greedy/resp"
	r.write(&packets.Subscribe{PacketID: 1, Subscriptions: []packets.SubOptions{{Topic: respTopic, QoS: 1}}})
	if pk := r.read(); pk.Type != packets.SUBACK {
		t.Fatalf("want SUBACK, got %v", pk)
	}
	for i := range sent {
		r.write(&packets.Publish{
			PacketID: uint16(10 + i), QoS: 1, Topic: server.RequestTopic,
			Payload: cmd("SET", fmt.Sprint("k", i), "v"),
			Properties: &packets.Properties{
				ResponseTopic: respTopic, CorrelationData: []byte{byte(i)},
				User: []packets.User{{Key: "__ts", Value: e.stamp(0)}},
			},
		})
	}
	gate.held(t)
	// The first write is on disk; the next ones wait in memory, at most
	// inflight of them held plus the one whose hold is waiting.
	eng := e.srv.Engine()
	waitFor(t, "the held writes decided", func() bool { return eng.Len() >= 1+inflight })
	time.Sleep(100 * time.Millisecond) // room for a bug to decide more
	if n := eng.Len(); n > 2+inflight {
		t.Fatalf("%d writes decided while the disk is held, want at most %d", n, 2+inflight)
	}
	gate.release(nil)
	acks, answers := 0, 0
	for acks < sent || answers < sent {
		switch p := r.read().Content.(type) {
		case *packets.Puback:
			acks++
		case *packets.Publish:
			if int(p.Properties.CorrelationData[0]) != answers || string(p.Payload) != "+OK\r\n" {
				t.Fatalf("answer %d: %x %q", answers, p.Properties.CorrelationData, p.Payload)
			}
			answers++
			r.write(&packets.Puback{PacketID: p.PacketID})
		}
	}
	if eng.Len() != sent {
		t.Fatalf("%d keys, want %d", eng.Len(), sent)
	}
}

// The runtime reads the failure as its sentinel: a typed error, not only
// an -ERR text.
func TestGroupCommitFailureIsErrPersistenceInTheRuntime(t *testing.T) {
	e := newDiskEnv(t)
	host, port, err := net.SplitHostPort(e.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := runtime.Dial(ctx, runtime.Config{Host: host, Port: p, ClientID: "persist-failure"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gate := newDiskGate(e)
	done := make(chan error, 1)
	go func() {
		_, err := c.Set(ctx, []byte("k"), []byte("v"), runtime.SetOptions{Persist: true})
		done <- err
	}()
	gate.held(t)
	gate.release(errors.New("disk on fire"))
	if err := <-done; !errors.Is(err, runtime.ErrPersistence) {
		t.Fatalf("Set = %v, want runtime.ErrPersistence", err)
	}
	if _, ok := e.srv.Engine().Lookup([]byte("k")); ok {
		t.Fatal("k stored by a failed transaction")
	}
}

// Attached to a broker, the service cannot slow a client down (no Receive
// Maximum of its own: the broker hands it every request at once), so it
// bounds what it holds received and not yet decided: a client's requests
// past DefaultMaxInflight waiting (behind its answers waiting for a held
// disk) are dropped, their senders get no answer, and other clients are
// still served. Before, the queue grew without bound (1.2 GB in 15 s).
func TestExternalDropsAClientsRequestsPastWhatItHolds(t *testing.T) {
	const sent = 3000
	e := newDiskEnvOn(t, mosquittoURL(t), func(o *server.Options) { o.PersistAll = true })
	gate := newDiskGate(e)
	t.Cleanup(gate.unblock) // a failure while the disk is held must not hang the server's close
	var answers atomic.Int64
	respTopic := ownResponseTopic("flooder")
	pc, ctx := rawFlooder(t, e, "flooder", func(p *paho.Publish) {
		if p.Topic == respTopic {
			answers.Add(1)
		}
	})
	if _, err := pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: respTopic, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	for i := range sent {
		_, err := pc.PublishWithOptions(ctx, &paho.Publish{QoS: 1, Topic: server.RequestTopic, Payload: cmd("SET", fmt.Sprint("k", i), "v"),
			Properties: &paho.PublishProperties{ResponseTopic: respTopic, CorrelationData: []byte(fmt.Sprint(i)),
				User: paho.UserProperties{{Key: "__srcId", Value: "flooder"}, {Key: "__ts", Value: e.stamp(0)}}}},
			paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
		if err != nil {
			t.Fatal(err)
		}
	}
	gate.held(t)
	// What the service holds: the answers waiting for the disk
	// (MaxInflight), the one whose wait for room blocks the client's
	// queue, and the queue.
	const held = 2*server.DefaultMaxInflight + 1
	waitFor(t, "the requests past what the service holds dropped", func() bool { return server.ExternalDropped(e.srv) >= sent-held-1 })
	if n := e.srv.Engine().Len(); n > server.DefaultMaxInflight+2 {
		t.Fatalf("%d writes decided while the disk is held", n)
	}
	// Another client is served meanwhile.
	checkResponse(t, e.connect("bystander").do("GET", "unrelated"), "$-1\r\n", false)
	gate.release(nil)
	dropped := server.ExternalDropped(e.srv)
	waitFor(t, "every request kept answered", func() bool { return answers.Load() == sent-dropped })
	if n := int64(e.srv.Engine().Len()); n != sent-dropped {
		t.Fatalf("%d keys, %d dropped of %d", n, dropped, sent)
	}
}

// A client that names itself anew in every request (__srcId) gets past
// the per-client bounds, so the kept writes waiting for the disk are
// bounded over all clients too: past 64 MiB a kept SET waits before it is
// decided, the requests behind fill what the service holds, and the rest
// are dropped. Before, memory grew without bound (6.3 GB).
func TestExternalBoundsKeptWritesOfManyRequesters(t *testing.T) {
	const sent, size = 3000, 64 << 10
	e := newDiskEnvOn(t, mosquittoURL(t), func(o *server.Options) { o.PersistAll = true })
	gate := newDiskGate(e)
	t.Cleanup(gate.unblock)
	pc, ctx := rawFlooder(t, e, "rotator", func(*paho.Publish) {})
	value := strings.Repeat("v", size)
	for i := range sent {
		id := fmt.Sprint("requester-", i)
		_, err := pc.PublishWithOptions(ctx, &paho.Publish{QoS: 1, Topic: server.RequestTopic, Payload: cmd("SET", fmt.Sprint("k", i%100), value),
			Properties: &paho.PublishProperties{ResponseTopic: ownResponseTopic(id), CorrelationData: []byte(fmt.Sprint(i)),
				User: paho.UserProperties{{Key: "__srcId", Value: id}, {Key: "__ts", Value: e.stamp(0)}}}},
			paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
		if err != nil {
			t.Fatal(err)
		}
	}
	gate.held(t)
	// 64 MiB waiting for the disk is about a thousand such writes, and 64
	// MiB of requests waiting to be decided as many again.
	waitFor(t, "the requests past what the service holds dropped", func() bool { return server.ExternalDropped(e.srv) >= sent-2300 })
	if st := e.srv.Stats().Persist; st.Changes > 2300 {
		t.Fatalf("%d changes committed or waiting", st.Changes)
	}
	checkResponse(t, e.connect("bystander").do("GET", "unrelated"), "$-1\r\n", false)
}

// rawFlooder is a paho client of the env's broker that publishes as fast
// as a test asks, handing every message it receives to got; ctx bounds
// the test's calls.
func rawFlooder(t *testing.T, e *env, id string, got func(*paho.Publish)) (*paho.Client, context.Context) {
	t.Helper()
	u, err := url.Parse(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, wait)
	if err != nil {
		t.Fatal(err)
	}
	pc := paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			got(pr.Packet)
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	t.Cleanup(cancel)
	if _, err := pc.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Disconnect(&paho.Disconnect{}) })
	return pc, ctx
}
