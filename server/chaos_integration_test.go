package server_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/server"
)

// chaosTrace collects the trace's reasons.
type chaosTrace struct {
	mu     sync.Mutex
	events []server.RequestEvent
}

func (ct *chaosTrace) opt(o *server.Options) {
	o.OnRequest = func(ev *server.RequestEvent) {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		c := *ev
		c.Key, c.Payload = append([]byte(nil), ev.Key...), nil
		ct.events = append(ct.events, c)
	}
}

func (ct *chaosTrace) injected() []server.RequestEvent {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var out []server.RequestEvent
	for _, ev := range ct.events {
		if strings.Contains(ev.Reason, "injected by chaos rule") {
			out = append(out, ev)
		}
	}
	return out
}

func TestChaosEffects(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("chaos-app")
		if err := e.srv.SetChaos([]server.ChaosRule{
			{Name: "quota", Verbs: []string{"SET"}, Key: "full/*", Effect: server.ChaosError, Error: "the quota has been exceeded", Count: 1},
			{Name: "lost", Verbs: []string{"GET"}, Key: "lost", Effect: server.ChaosDrop},
			{Name: "slow", Key: "slow", Effect: server.ChaosDelay, Delay: server.Duration(50 * time.Millisecond)},
		}); err != nil {
			t.Fatal(err)
		}
		// error: answered -ERR, the request not run; then the count is spent.
		checkResponse(t, c.do("SET", "full/a", "v"), "-ERR the quota has been exceeded\r\n", false)
		if _, ok := e.srv.Engine().Lookup([]byte("full/a")); ok {
			t.Fatal("a request answered by a chaos rule ran")
		}
		checkResponse(t, c.do("SET", "full/a", "v"), "+OK\r\n", true)
		// drop: no answer.
		c.send(request{payload: cmd("GET", "lost")})
		c.expectNoResponse()
		// delay: the request runs, its answer comes (later).
		checkResponse(t, c.do("SET", "slow", "v"), "+OK\r\n", true)
		if _, ok := e.srv.Engine().Lookup([]byte("slow")); !ok {
			t.Fatal("a delayed request did not run")
		}
		st := e.srv.Chaos()
		if len(st) != 3 || st[0].Fired != 1 || st[0].Left == nil || *st[0].Left != 0 || st[1].Fired != 1 || st[2].Fired != 1 {
			t.Fatalf("status %+v", st)
		}
		// Cleared: nothing is injected any more.
		if err := e.srv.SetChaos(nil); err != nil {
			t.Fatal(err)
		}
		checkResponse(t, c.do("GET", "lost"), "$-1\r\n", false)
		if e.srv.Chaos() != nil {
			t.Fatal("rules left after clearing")
		}
	})
}

func TestChaosIsTraced(t *testing.T) {
	ct := &chaosTrace{}
	e := newEnv(t, "", []func(*server.Options){ct.opt, func(o *server.Options) {
		o.Chaos = []server.ChaosRule{
			{Name: "flaky reads", Verbs: []string{"GET"}, Key: "k", Effect: server.ChaosError, Error: "busy"},
			{Name: "cut", Verbs: []string{"DEL"}, Effect: server.ChaosDrop},
		}
	}})
	c := e.connect("chaos-traced")
	checkResponse(t, c.do("GET", "k"), "-ERR busy\r\n", false)
	c.send(request{payload: cmd("DEL", "k")})
	c.expectNoResponse()
	waitFor(t, "two injected requests in the trace", func() bool { return len(ct.injected()) == 2 })
	ev := ct.injected()
	if ev[0].Verb != "GET" || ev[0].Error != "busy" || !strings.Contains(ev[0].Reason, `"flaky reads"`) {
		t.Errorf("GET: %+v", ev[0])
	}
	if ev[1].Verb != "DEL" || !ev[1].Dropped || !strings.Contains(ev[1].Reason, `"cut"`) {
		t.Errorf("DEL: %+v", ev[1])
	}
}

func TestChaosDisconnect(t *testing.T) {
	fe := newFaultEnv(t, false)
	if err := fe.srv.SetChaos([]server.ChaosRule{{Client: "victim", Key: "k", Effect: server.ChaosDisconnect}}); err != nil {
		t.Fatal(err)
	}
	bystander := fe.peer("bystander")
	sub(t, bystander)
	if _, err := bystander.request(cmd("SET", "k", "v"), nil); err != nil {
		t.Fatal(err)
	}
	if m := bystander.next(); string(m.Payload) != "+OK\r\n" {
		t.Fatalf("another client's request answered %q", m.Payload)
	}
	p := fe.peer("victim")
	sub(t, p)
	go func() { _, _ = p.request(cmd("GET", "k"), nil) }()
	if d := p.disconnected(); d.ReasonCode != 0x98 {
		t.Fatalf("DISCONNECT 0x%02X, want 0x98", d.ReasonCode)
	}
}

func TestChaosOptionsAreChecked(t *testing.T) {
	_, err := server.New(server.Options{Listen: "127.0.0.1:0", Chaos: []server.ChaosRule{{Effect: "boom"}}})
	if !errors.Is(err, server.ErrInvalidOptions) || !errors.Is(err, server.ErrInvalidChaos) {
		t.Fatalf("New: %v", err)
	}
	srv := newEnv(t, "", nil).srv
	if err := srv.SetChaos([]server.ChaosRule{{Effect: server.ChaosDrop}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetChaos([]server.ChaosRule{{Effect: "boom"}}); !errors.Is(err, server.ErrInvalidChaos) {
		t.Fatalf("SetChaos: %v", err)
	}
	if st := srv.Chaos(); len(st) != 1 || st[0].Effect != server.ChaosDrop {
		t.Fatalf("a refused SetChaos changed the rules: %+v", st)
	}
}

// A server closes with answers still held by a delay rule: they are
// dropped, nothing hangs.
func TestChaosDelayedAnswersEndWithTheServer(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		if err := e.srv.SetChaos([]server.ChaosRule{{Key: "held", Effect: server.ChaosDelay, Delay: server.Duration(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		c := e.connect("chaos-held")
		c.send(request{payload: cmd("GET", "held"), unacked: true}) // the PUBACK is held with the answer
		waitFor(t, "the rule to hold the answer", func() bool { return e.srv.Chaos()[0].Fired == 1 })
		if err := e.srv.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// An attached service cannot disconnect a client: a disconnect rule drops
// the request instead.
func TestChaosDisconnectIsADropInExternalMode(t *testing.T) {
	e := newEnv(t, mosquittoURL(t), []func(*server.Options){func(o *server.Options) {
		o.Chaos = []server.ChaosRule{{Key: "cut", Effect: server.ChaosDisconnect}}
	}})
	c := e.connect("chaos-external")
	c.send(request{payload: cmd("SET", "cut", "v")})
	c.expectNoResponse()
	if _, ok := e.srv.Engine().Lookup([]byte("cut")); ok {
		t.Fatal("the request ran")
	}
	checkResponse(t, c.do("SET", "other", "v"), "+OK\r\n", true)
}

// Attack (review of #30, F3): a client floods requests under a chaos
// delay rule (17,000 answers of ~10 KB held in external mode). Held
// answers are bounded per client and over the server: past the bounds a
// request is answered at once, and another client keeps its share.
func TestChaosHeldAnswersAreBounded(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		server.SetHeldAnswerBounds(e.srv, 2, 3)
		if err := e.srv.SetChaos([]server.ChaosRule{{Key: "slow", Effect: server.ChaosDelay, Delay: server.Duration(time.Hour)}}); err != nil {
			t.Fatal(err)
		}
		flood, other := e.connect("chaos-flood"), e.connect("chaos-other")
		hold := func(c *client, want int) {
			t.Helper()
			c.send(request{payload: cmd("GET", "slow"), unacked: true})
			testwait.Until(t, wait, "the answer held", func() bool { return server.HeldAnswers(e.srv) == want })
		}
		hold(flood, 1)
		hold(flood, 2)
		// The client's share is used: its next answer comes at once.
		corr := flood.send(request{payload: cmd("GET", "slow"), unacked: true})
		if p := flood.await(); string(p.Properties.CorrelationData) != string(corr) {
			t.Fatalf("past the client's share: answer %q to another request", p.Payload)
		}
		hold(other, 3)
		// The server's bound is reached: answered at once.
		corr = other.send(request{payload: cmd("GET", "slow"), unacked: true})
		if p := other.await(); string(p.Properties.CorrelationData) != string(corr) {
			t.Fatalf("past the server's bound: answer %q to another request", p.Payload)
		}
		if n := server.HeldAnswers(e.srv); n != 3 {
			t.Fatalf("%d answers held, want 3", n)
		}
	})
}
