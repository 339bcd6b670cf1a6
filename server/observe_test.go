package server_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/ssgen/ssgen/server"
)

// events collects what Options.OnRequest is told, copying what it keeps.
type events struct {
	mu  sync.Mutex
	all []server.RequestEvent
}

func (ev *events) on(e *server.RequestEvent) {
	c := *e
	c.Key = append([]byte(nil), e.Key...)
	c.Payload = append([]byte(nil), e.Payload...)
	ev.mu.Lock()
	ev.all = append(ev.all, c)
	ev.mu.Unlock()
}

func (ev *events) last(t *testing.T) server.RequestEvent {
	t.Helper()
	var got server.RequestEvent
	waitFor(t, "an event", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		if len(ev.all) == 0 {
			return false
		}
		got = ev.all[len(ev.all)-1]
		ev.all = ev.all[:0]
		return true
	})
	return got
}

const observePolicy = `
rules:
  - principals: {clientIds: ["writer"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["pub/*"], method: ReadWrite}
  - principals: {clientIds: ["writer", "reader"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["pub/*"], method: Read}
`

// TestOnRequestTellsEveryRequestWithItsReason: each answer, refusal and
// drop reaches the observer with client, verb, key, status, error text
// and the reason behind a refusal (envelope rule, authorization rules,
// fencing token).
func TestOnRequestTellsEveryRequestWithItsReason(t *testing.T) {
	pol, err := server.ParsePolicy([]byte(observePolicy))
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	e := newEnv(t, "", []func(*server.Options){func(o *server.Options) {
		o.OnRequest = ev.on
		o.Security.Authorization = pol
	}})
	w := e.connect("writer")
	r := e.connect("reader")

	checkResponse(t, w.do("SET", "pub/a", "1"), "+OK\r\n", true)
	got := ev.last(t)
	if got.Client != "writer" || got.Verb != "SET" || string(got.Key) != "pub/a" || got.Status != 200 ||
		string(got.Payload) != "+OK\r\n" || got.Error != "" || got.Reason != "" || got.Version == "" || got.Latency <= 0 || got.Start.IsZero() {
		t.Fatalf("SET: %+v", got)
	}

	checkResponse(t, r.do("SET", "pub/a", "2"), "-ERR not authorized\r\n", false)
	got = ev.last(t)
	if got.Client != "reader" || got.Error != "not authorized" || got.Reason != `rule 2 names client "reader" but grants no Write on this key` {
		t.Fatalf("refused SET: %+v", got)
	}
	checkResponse(t, r.do("GET", "other"), "-ERR not authorized\r\n", false)
	if got = ev.last(t); got.Reason != `rule 2 names client "reader" but grants no Read on this key` {
		t.Fatalf("refused GET: %+v", got)
	}

	checkResponse(t, w.roundTrip(request{payload: cmd("SET", "pub/f", "1"), ft: e.stamp(0)}), "+OK\r\n", true)
	checkResponse(t, w.do("DEL", "pub/f"), "-ERR a fencing token is required for this request\r\n", false)
	if got = ev.last(t); got.Verb != "DEL" || !strings.HasPrefix(got.Reason, "the key is fenced by token ") {
		t.Fatalf("fenced DEL: %+v", got)
	}

	w.send(request{payload: cmd("GET", "pub/a"), qos0: true})
	if got = ev.last(t); !got.Dropped || got.Reason != "request not at QoS 1" || got.Verb != "" || got.Status != 0 {
		t.Fatalf("QoS 0: %+v", got)
	}
	w.send(request{payload: cmd("GET", "pub/a"), noCorr: true})
	w.await()
	if got = ev.last(t); got.Status != 400 || got.Error != "correlation data missing" {
		t.Fatalf("400: %+v", got)
	}

	// A tool's own request is observed under the name it gives.
	res := e.srv.Exec(server.ExecRequest{Client: "console", Args: [][]byte{[]byte("DEL"), []byte("pub/a")}})
	if string(res.Payload) != ":1\r\n" {
		t.Fatalf("Exec: %q", res.Payload)
	}
	if got = ev.last(t); got.Client != "console" || got.Verb != "DEL" || string(got.Key) != "pub/a" || string(got.Payload) != ":1\r\n" {
		t.Fatalf("Exec event: %+v", got)
	}
}

func TestClientsListsSubscriptionsAndWatches(t *testing.T) {
	e := newEnv(t, "", nil)
	c := e.connect("lister")
	c.subscribeNotify()
	checkResponse(t, c.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	list, total := e.srv.Clients(0)
	if total != 1 || len(list) != 1 {
		t.Fatalf("clients %+v (total %d)", list, total)
	}
	ci := list[0]
	if ci.ID != "lister" || !ci.Connected || ci.Watches != 1 || len(ci.Subscriptions) != 2 || ci.Remote == "" {
		t.Fatalf("client %+v", ci)
	}
	key, ok := server.NotifyKey("lister", server.NotifyTopic("lister", []byte("k/1")))
	if !ok || string(key) != "k/1" {
		t.Fatalf("NotifyKey: %q %v", key, ok)
	}
	if _, ok := server.NotifyKey("lister", server.NotifyTopic("other", []byte("k/1"))); ok {
		t.Fatal("NotifyKey decoded another client's topic")
	}
	checkResponse(t, c.do("SET", "k", "v"), "+OK\r\n", true)
	c.notification()
	if s := e.srv.Stats(); s.NotificationsSent != 1 || s.NotificationsDropped != 0 {
		t.Fatalf("stats %+v", s)
	}
}
