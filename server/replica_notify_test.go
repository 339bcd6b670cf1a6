package server_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/persist"
)

// memReplica is a server.Replica kept in memory: Load restores one key
// and one KEYNOTIFY registration, as a new leader finds them in etcd
// after its predecessor acknowledged the key's SET and died before
// notifying it; Commit accepts everything.
type memReplica struct {
	key, value, watcher string
	version             hlc.HLC

	mu      sync.Mutex
	commits int
}

func (r *memReplica) Commit([]engine.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits++
	return nil
}

func (r *memReplica) Limits() persist.BackendLimits { return persist.BackendLimits{} }

func (r *memReplica) Load(eng *engine.Engine) error {
	eng.Restore([]engine.Record{{Key: r.key, Value: []byte(r.value), Version: r.version}}, r.version)
	eng.RestoreWatch(r.watcher, r.key)
	return nil
}

// A server on a replica takes over from one that answered a SET and died
// before notifying it: it tells every restored registration its key's
// state before it answers any request, so a request answered at once
// (one the runtime kept sending through the gap arrives as soon as the
// request subscription exists) cannot have its change notified first, and
// the change the old leader acknowledged reaches its watcher. Before, the
// etcd node sent those notifications after Start: a SET of the watched key
// taken in between was notified twice and the acknowledged one never
// (found by the HA torture test).
func TestReplicaServerNotifiesRestoredStateBeforeServing(t *testing.T) {
	srv, old, watcher, writer := newReplicaServer(t, "acked-by-the-old-leader")
	// The first request is taken the moment the server subscribes, before
	// Start returns.
	var answer string
	server.SetAttachedHook(srv, func() {
		if answer == "" {
			answer = string(writer.do("SET", "k", "new").Payload)
		}
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if answer != "+OK\r\n" {
		t.Fatalf("SET answered %q", answer)
	}
	var got []string
	for len(got) < 2 {
		select {
		case p := <-watcher.other:
			got = append(got, describeNotification(t, p))
		case <-time.After(wait):
			t.Fatalf("notifications so far %q; want two", got)
		}
	}
	want := fmt.Sprintf("SET %q __ts %v", "acked-by-the-old-leader", old)
	if got[0] != want {
		t.Errorf("first notification %s, want %s (the state the old leader acknowledged, told before any change made here); all: %q", got[0], want, got)
	}
	if len(got[1]) < 9 || got[1][:9] != `SET "new"` {
		t.Errorf("second notification %s, want the SET made on the new server", got[1])
	}
}

// describeNotification is a notification as "OP value __ts version".
func describeNotification(t *testing.T, p *paho.Publish) string {
	t.Helper()
	n, err := resp3.ParseNotification(p.Payload)
	if err != nil {
		t.Fatalf("notification %q: %v", p.Payload, err)
	}
	ts := ""
	if p.Properties != nil {
		for _, u := range p.Properties.User {
			if u.Key == protocol.PropTimestamp {
				ts = u.Value
			}
		}
	}
	if n.Op == resp3.OpDelete {
		return "DELETE __ts " + ts
	}
	return fmt.Sprintf("SET %q __ts %s", n.Value, ts)
}

// A server on a replica publishes a write's notification before its
// answer: a leader killed between the two loses the answer (the writer's
// request times out, its outcome unknown), never the notification of a
// change it acknowledged. The hook holds the notification back until the
// answer has reached the writer, or for a while: with the answer released
// on its own (before), it comes first.
func TestReplicaServerPublishesNotificationsBeforeAnswers(t *testing.T) {
	srv, _, watcher, writer := newReplicaServer(t, "v0")
	// held is the answer if it reached the writer while the SET's
	// notification was held back, else nil.
	held := make(chan *paho.Publish, 1)
	var first sync.Once
	server.SetDeliverHook(srv, func(n engine.Notification) {
		if string(n.Key) != "k" || n.Wait == 0 {
			return // the restored state, told at attach
		}
		first.Do(func() {
			// Not a synchronisation: the answer must not come at all while
			// the notification is held; the bound only ends the wait.
			select {
			case p := <-writer.resp:
				held <- p
			case <-time.After(500 * time.Millisecond):
				held <- nil
			}
		})
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	writer.send(request{payload: cmd("SET", "k", "v1")})
	var answer *paho.Publish
	select {
	case answer = <-held:
	case <-time.After(wait):
		t.Fatal("the SET's notification was never delivered")
	}
	if answer != nil {
		t.Error("the SET was answered before its notification was published")
	} else {
		answer = writer.await()
	}
	if string(answer.Payload) != "+OK\r\n" {
		t.Fatalf("SET answered %q", answer.Payload)
	}
	for {
		select {
		case p := <-watcher.other:
			if got := describeNotification(t, p); len(got) >= 8 && got[:8] == `SET "v1"` {
				return
			}
		case <-time.After(wait):
			t.Fatal("the watcher got no notification of the SET")
		}
	}
}

// newReplicaServer is a server (not started) on a replica that holds key
// "k" = value, written by an old leader at version old, and a
// registration of client "watcher" for it; watcher (subscribed to its
// notifications) and writer are connected to the server's broker.
func newReplicaServer(t *testing.T, value string) (srv *server.Server, old hlc.HLC, watcher, writer *client) {
	t.Helper()
	old = hlc.HLC{Wall: uint64(time.Now().Add(-time.Second).UnixMilli()), Node: "old-leader"}
	rep := &memReplica{key: "k", value: value, watcher: "watcher", version: old}
	srv, err := server.New(server.Options{Broker: mosquittoURL(t), Replica: rep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	e := &env{t: t, srv: srv, clock: engine.NewFakeClock(time.Now())}
	watcher = e.connect("watcher")
	watcher.subscribeNotify()
	return srv, old, watcher, e.connect("writer")
}
