package runtime

import (
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// A pooled call comes back empty, and a response delivered after its
// request stopped waiting does not reach the next request.
func TestCallsAreReusedClean(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "pool-client"}, respTopic: ResponseTopic("pool-client")}
	cl := c.getCall()
	cl.id = newCorrelationID()
	c.pending.add(cl.id, cl.resp)
	cl.payload = append(cl.payload, "GET k"...)
	c.envelope(cl, hlc.HLC{Wall: 1, Node: "pool-client"}, reqOpts{persist: true}, time.Now().Add(time.Second))
	if !c.pending.deliver(cl.id[:], &paho.Publish{}) {
		t.Fatal("deliver found nobody waiting")
	}
	c.pending.remove(cl.id)
	c.putCall(cl)
	if c.pending.deliver(cl.id[:], &paho.Publish{}) {
		t.Fatal("deliver reached a removed request")
	}
	// sync.Pool may hand back the same call or a new one; either must be clean.
	next := c.getCall()
	if len(next.payload) != 0 || next.pub.Properties != nil || next.user[0].Key != "" || len(next.resp) != 0 {
		t.Fatalf("reused call not clean: payload %q, user %v, %d responses queued", next.payload, next.user, len(next.resp))
	}
	if c.pending.len() != 0 {
		t.Fatalf("%d requests still registered", c.pending.len())
	}
}
