package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
)

func notifySet(v string) string {
	return fmt.Sprintf("*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$%d\r\n%s\r\n", len(v), v)
}

const notifyDelete = "*2\r\n$6\r\nNOTIFY\r\n$6\r\nDELETE\r\n"

// checkNotification checks a notification's topic, payload and __ts
// (equal to wantTS unless that is empty) and returns its __ts.
func checkNotification(t *testing.T, p *paho.Publish, watcher, key, payload, wantTS string) string {
	t.Helper()
	if want := server.NotifyTopic(watcher, []byte(key)); p.Topic != want {
		t.Fatalf("notification topic %q, want %q", p.Topic, want)
	}
	if string(p.Payload) != payload {
		t.Fatalf("notification payload %q, want %q", p.Payload, payload)
	}
	if p.QoS != 1 {
		t.Errorf("notification QoS %d, want 1", p.QoS)
	}
	ts := props(t, p)["__ts"]
	if _, err := hlc.Parse(ts); err != nil {
		t.Fatalf("notification __ts: %v", err)
	}
	if wantTS != "" && ts != wantTS {
		t.Fatalf("notification __ts %s, want %s", ts, wantTS)
	}
	return ts
}

func TestNotifications(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		a, b := e.connect("watcher-a"), e.connect("writer-b")
		a.subscribeNotify()
		checkResponse(t, a.do("KEYNOTIFY", "k"), "+OK\r\n", true)

		t.Run("SET, DEL and VDEL by another client", func(t *testing.T) {
			a.t, b.t = t, t
			ts := checkResponse(t, b.do("SET", "k", "v1"), "+OK\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifySet("v1"), ts)
			checkResponse(t, b.do("DEL", "k"), ":1\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifyDelete, "")
			checkResponse(t, b.do("SET", "k", ""), "+OK\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifySet(""), "")
			checkResponse(t, b.do("VDEL", "k", "other"), ":-1\r\n", true)
			checkResponse(t, b.do("VDEL", "k", ""), ":1\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifyDelete, "")
		})
		t.Run("the changing client is notified too", func(t *testing.T) {
			a.t, b.t = t, t
			ts := checkResponse(t, a.do("SET", "k", "mine"), "+OK\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifySet("mine"), ts)
		})
		t.Run("expiry notifies DELETE", func(t *testing.T) {
			a.t, b.t = t, t
			checkResponse(t, b.do("SET", "k", "short", "PX", "1000"), "+OK\r\n", true)
			checkNotification(t, a.notification(), a.id, "k", notifySet("short"), "")
			e.clock.Advance(2 * time.Second)
			e.srv.Engine().Expire()
			checkNotification(t, a.notification(), a.id, "k", notifyDelete, "")
		})
		t.Run("binary keys are hex in the topic", func(t *testing.T) {
			a.t, b.t = t, t
			key := "\x00\xffk/+#"
			checkResponse(t, a.do("KEYNOTIFY", key), "+OK\r\n", true)
			checkResponse(t, b.do("SET", key, "x"), "+OK\r\n", true)
			checkNotification(t, a.notification(), a.id, key, notifySet("x"), "")
		})
		t.Run("notifications arrive in order", func(t *testing.T) {
			a.t, b.t = t, t
			const n = 50
			for i := range n {
				b.send(request{payload: cmd("SET", "k", fmt.Sprint(i))})
			}
			for range n {
				b.await()
			}
			for i := range n {
				checkNotification(t, a.notification(), a.id, "k", notifySet(fmt.Sprint(i)), "")
			}
		})
		t.Run("KEYNOTIFY STOP ends them", func(t *testing.T) {
			a.t, b.t = t, t
			checkResponse(t, a.do("KEYNOTIFY", "k", "STOP"), "+OK\r\n", true)
			checkResponse(t, a.do("KEYNOTIFY", "k2"), "+OK\r\n", true)
			checkResponse(t, b.do("SET", "k", "unwatched"), "+OK\r\n", true)
			checkResponse(t, b.do("SET", "k2", "watched"), "+OK\r\n", true)
			// A's notifications are sent in change order, so one for k
			// would come first.
			checkNotification(t, a.notification(), a.id, "k2", notifySet("watched"), "")
		})
	})
}

// The real broker delivers notifications into the watcher's session even
// without a subscription (the official Go and .NET SDKs rely on it), and
// exactly once when there is one.
func TestNotificationDeliveryWithAndWithoutSubscription(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, e *env) {
		b := e.connect("writer")
		for _, subscribed := range []bool{false, true} {
			t.Run(fmt.Sprintf("subscribed=%v", subscribed), func(t *testing.T) {
				e.t, b.t = t, t
				a := e.connect(fmt.Sprintf("watcher-%v", subscribed))
				if subscribed {
					a.subscribeNotify()
				}
				checkResponse(t, a.do("KEYNOTIFY", "k"), "+OK\r\n", true)
				// A duplicate of a notification would reach the client before the
				// next notification: both paths have written it by the time the
				// next one is delivered.
				for _, v := range []string{"v1", "v2", "v3"} {
					checkResponse(t, b.do("SET", "k", v), "+OK\r\n", true)
				}
				for _, v := range []string{"v1", "v2", "v3"} {
					checkNotification(t, a.notification(), a.id, "k", notifySet(v), "")
				}
				checkResponse(t, a.do("KEYNOTIFY", "k", "STOP"), "+OK\r\n", true)
			})
		}
		if n := e.srv.Dropped(); n != 0 {
			t.Fatalf("%d messages dropped", n)
		}
	})
}

func TestDisconnectDropsRegistrations(t *testing.T) {
	embeddedOnly(t, func(t *testing.T, e *env) {
		a := e.connect("leaver")
		checkResponse(t, a.do("KEYNOTIFY", "k"), "+OK\r\n", true)
		if w := e.srv.Engine().Watchers([]byte("k")); len(w) != 1 || w[0] != "leaver" {
			t.Fatalf("watchers %v", w)
		}
		_ = a.pc.Disconnect(&paho.Disconnect{})
		waitFor(t, "the registration to be dropped", func() bool {
			return len(e.srv.Engine().Watchers([]byte("k"))) == 0
		})
	})
}

// An attached service never learns of other clients' disconnects: the
// documented limit of external mode.
func TestExternalModeKeepsRegistrationsOfDisconnectedClients(t *testing.T) {
	e := newEnv(t, mosquittoURL(t), nil)
	a, b := e.connect("leaver"), e.connect("stayer")
	checkResponse(t, a.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	_ = a.pc.Disconnect(&paho.Disconnect{})
	checkResponse(t, b.do("GET", "k"), "$-1\r\n", false)
	if w := e.srv.Engine().Watchers([]byte("k")); len(w) != 1 {
		t.Fatalf("watchers %v", w)
	}
}
