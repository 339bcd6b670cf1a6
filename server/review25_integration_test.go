package server_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server"
)

// Findings of an attacker's review of ssgen serve (issue #25).

// F1: in external mode the requester is whoever __srcId names. No broker
// checks user properties, and MQTT 5 tells a subscriber nothing about who
// published, so eve (who only needs to publish to the request topic, which
// every client of the state store may) can have answers published into
// alice's response topic, register notifications for alice, and stop
// alice's registrations. This test documents that behaviour, which
// docs/security.md#external-mode states, and the warning the server logs
// when it starts in external mode.
func TestExternalModeCannotVerifySrcID(t *testing.T) {
	var logs lockedBuffer
	e := newEnv(t, mosquittoURL(t), []func(*server.Options){func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}})
	waitFor(t, "the external-mode warning", func() bool {
		return strings.Contains(logs.String(), "which no broker verifies")
	})
	alice, eve := e.connect("alice1"), e.connect("eve")
	alice.subscribeNotify()
	spoof := func(key string, args ...string) request {
		return request{
			payload:   cmd(args...),
			user:      paho.UserProperties{{Key: "__srcId", Value: key}, {Key: "__protVer", Value: "1.0"}, {Key: "__ts", Value: e.stamp(0)}},
			respTopic: ownResponseTopic(key),
			corr:      []byte("forged-corr"),
		}
	}

	// A forged answer, with eve's correlation data, in alice's stream.
	eve.send(spoof("alice1", "GET", "k"))
	if p := alice.await(); string(p.Properties.CorrelationData) != "forged-corr" {
		t.Fatalf("alice got %q (corr %q)", p.Payload, p.Properties.CorrelationData)
	}

	// A registration in alice's name: alice is notified of eve's choice.
	eve.send(spoof("alice1", "KEYNOTIFY", "eve-chose"))
	if p := alice.await(); string(p.Payload) != "+OK\r\n" {
		t.Fatalf("spoofed KEYNOTIFY: %q", p.Payload)
	}
	if w := e.srv.Engine().Watchers([]byte("eve-chose")); len(w) != 1 || w[0] != "alice1" {
		t.Fatalf("watchers of eve-chose: %v", w)
	}

	// And alice's own registration stopped in her name.
	checkResponse(t, alice.do("KEYNOTIFY", "mine"), "+OK\r\n", true)
	eve.send(spoof("alice1", "KEYNOTIFY", "mine", "STOP"))
	if p := alice.await(); string(p.Payload) != "+OK\r\n" {
		t.Fatalf("spoofed STOP: %q", p.Payload)
	}
	if w := e.srv.Engine().Watchers([]byte("mine")); len(w) != 0 {
		t.Fatalf("watchers of mine after the forged STOP: %v", w)
	}
}

// The embedded broker knows who connected: it takes __srcId from the
// connection, so none of the above reaches alice there (the topic rule
// refuses eve's publish naming alice's response topic).
func TestEmbeddedModeDoesNotLogTheExternalWarning(t *testing.T) {
	var logs lockedBuffer
	e := newEnv(t, "", []func(*server.Options){func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}})
	checkResponse(t, e.connect("c").do("GET", "k"), "$-1\r\n", false)
	if strings.Contains(logs.String(), "which no broker verifies") {
		t.Fatalf("embedded mode logged the external warning:\n%s", logs.String())
	}
}

// F2: the watch quota counted registrations, not bytes: 3,000 KEYNOTIFY
// of 300,000-byte keys took the server from 17 MB to 1.65 GB, while
// --max-bytes and --max-keys counted none of it. The bytes of watched keys
// are now bounded per client (4 MiB by default): the 14th such key is
// refused, on both transports, and another client still has its own room.
func TestWatchedKeyBytesAreBoundedPerClient(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("big-watcher")
		const n = 300000
		fits := server.DefaultMaxWatchBytesPerClient / n
		for i := range fits {
			checkResponse(t, c.do("KEYNOTIFY", bigKey(i, n)), "+OK\r\n", true)
		}
		checkResponse(t, c.do("KEYNOTIFY", bigKey(fits, n)), quota, false)
		checkResponse(t, c.do("KEYNOTIFY", bigKey(0, n)), "+OK\r\n", true) // renewing passes
		if got := e.srv.Engine().WatchBytes(); got != int64(fits*n) {
			t.Fatalf("watched bytes %d, want %d", got, fits*n)
		}
		checkResponse(t, e.connect("other").do("KEYNOTIFY", bigKey(fits, n)), "+OK\r\n", true)
	})
}

func bigKey(i, n int) string {
	k := []byte(strings.Repeat("k", n))
	copy(k, []byte{byte('a' + i/26), byte('a' + i%26)})
	return string(k)
}

// F2, external mode: the per-client quotas are per __srcId there, and a
// fresh __srcId per request got round them (external mode never drops a
// registration, since it cannot see disconnects). The registrations of
// all clients together are bounded (MaxWatches, MaxWatchBytes), so that
// is bounded too.
func TestWatchesOfAllClientsAreBoundedWhateverTheSrcID(t *testing.T) {
	e := newEnv(t, mosquittoURL(t), []func(*server.Options){withLimits(server.Limits{MaxWatches: 5, MaxWatchBytes: 1 << 20})})
	c := e.connect("rotating")
	for i := range 7 {
		id := "fresh-" + string(rune('a'+i))
		c.subscribe(protocol.ResponseTopic(protocol.OwnLevel(id)))
		c.send(request{
			payload:   cmd("KEYNOTIFY", "k"),
			user:      paho.UserProperties{{Key: "__srcId", Value: id}, {Key: "__protVer", Value: "1.0"}, {Key: "__ts", Value: e.stamp(0)}},
			respTopic: ownResponseTopic(id),
		})
		want := "+OK\r\n"
		if i >= 5 {
			want = quota
		}
		if p := c.notification(); string(p.Payload) != want {
			t.Fatalf("registration %d (%s): %q, want %q", i, id, p.Payload, want)
		}
	}
	if n := e.srv.Engine().WatchCount(); n != 5 {
		t.Fatalf("%d registrations, want 5", n)
	}
}
