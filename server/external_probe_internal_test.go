package server

import (
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// Any client may publish to the service's ping topic while a probe runs:
// the service answers only 8-byte pings, and no more of them than the
// probe sends, so the topic cannot be used to make it publish at will.
func TestProbeAnswersNoMorePingsThanItSends(t *testing.T) {
	x := &external{prober: newBrokerProbe("svc", 0, nil)}
	p := x.prober
	if p.ping != "clients/svc/ssgen/probe/ping" {
		t.Fatalf("ping topic %q", p.ping)
	}
	ping := func(payload []byte) bool {
		return x.probeReceived(&paho.Publish{Topic: p.ping, Payload: payload})
	}
	if !ping(make([]byte, 8)) || p.pongs.Load() > 0 {
		t.Fatal("a ping outside a probe was answered")
	}
	p.pongs.Store(probeRounds)
	if !ping(make([]byte, 1<<20)) || p.pongs.Load() != probeRounds {
		t.Fatal("a ping of the wrong size was answered")
	}
	for range 3 * probeRounds {
		ping(make([]byte, 8))
	}
	if n := p.pongs.Load(); n > 0 {
		t.Fatalf("%d pongs left after a flood of pings", n)
	}
	if x.probeReceived(&paho.Publish{Topic: RequestTopic}) {
		t.Fatal("a request was taken for a ping")
	}
	if q := newBrokerProbe("a/b+", 0, nil); q.enabled() {
		t.Fatal("a client id that cannot be a topic level was probed")
	}
}
