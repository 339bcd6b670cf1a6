package bench

import (
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// The echo must carry what the protocol makes every client and service
// send (docs/wire-protocol.md#requests and #responses), or the ratio to it would charge ssgen
// with the protocol's own cost; the bare echo carries none of it.
func TestEchoShapeCarriesTheProtocolEnvelope(t *testing.T) {
	const id = "ssgen-bench-0a1b2c3d-raw-0"
	s := newEchoShape(false, id)
	req := s.request("t/req", "t/resp", []byte("payload"), 7)
	pp := req.Properties
	if req.QoS != 1 || pp.ResponseTopic != "t/resp" || len(pp.CorrelationData) != corrBytes ||
		pp.ContentType != "application/octet-stream" || pp.PayloadFormat == nil || pp.MessageExpiry == nil {
		t.Fatalf("request envelope %+v", pp)
	}
	want := []string{"__srcId", "__ts", "__protVer", "$partition", "$high_priority"}
	if len(pp.User) != len(want) {
		t.Fatalf("request user properties %v, want %v", pp.User, want)
	}
	for i, k := range want {
		if pp.User[i].Key != k {
			t.Errorf("request user property %d is %q, want %q", i, pp.User[i].Key, k)
		}
	}
	if v := pp.User.Get("__srcId"); v != id {
		t.Errorf("__srcId %q, want the client id", v)
	}
	if _, err := hlc.Parse(pp.User.Get("__ts")); err != nil {
		t.Errorf("__ts: %v", err)
	}

	reply := s.pahoReply(req)
	if reply.Topic != "t/resp" || len(reply.Payload) != len(req.Payload) ||
		string(reply.Properties.CorrelationData) != string(pp.CorrelationData) || reply.Properties.ContentType == "" {
		t.Fatalf("reply %+v", reply)
	}
	mp := s.mochiProps(pp.CorrelationData)
	for i, k := range []string{"__stat", "__ts", "__protVer"} {
		if reply.Properties.User[i].Key != k || mp.User[i].Key != k || reply.Properties.User[i].Value != mp.User[i].Val {
			t.Errorf("reply user property %d: paho %v, mochi %v, want key %q", i, reply.Properties.User[i], mp.User[i], k)
		}
	}

	bare := newEchoShape(true, id)
	breq := bare.request("t/req", "t/resp", nil, 7)
	if p := breq.Properties; len(p.User) != 0 || p.ContentType != "" || p.MessageExpiry != nil || p.ResponseTopic == "" {
		t.Errorf("bare request %+v", p)
	}
	if p := bare.mochiProps([]byte("c")); len(p.User) != 0 || p.ContentType != "" {
		t.Errorf("bare reply %+v", p)
	}
}
