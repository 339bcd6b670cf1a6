package server

import (
	"testing"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/engine"
)

func TestNotifyTopicIsUpperCaseHexOfClientAndKey(t *testing.T) {
	got := NotifyTopic("client-id1", []byte{0x00, 0xab, 'k'})
	want := NotifyPrefix + "/636C69656E742D696431/command/notify/00AB6B"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestResponseTopicProblem(t *testing.T) {
	for _, tc := range []struct {
		topic     string
		forbidden bool
	}{
		{"clients/636C69656E74/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response", false},
		{"clients/client/services/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response", false},
		{"clients/client/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke", false},
		{"r", false},
		{RequestTopic, true},
		{NotifyPrefix, true},
		{NotifyPrefix + "/41/command/notify/41", true},
		{NotifyPrefix + "X", true},
		{"a/+/b", true},
		{"a/#", true},
		{"+", true},
		{"a//b", true},
		{"/a", true},
		{"a/", true},
		{"a\x00b", true},
	} {
		if got := responseTopicProblem(tc.topic) != ""; got != tc.forbidden {
			t.Errorf("%q: forbidden = %v, want %v", tc.topic, got, tc.forbidden)
		}
	}
}

func TestSupportedVersionAcceptsMajorOneAndAbsence(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "1.0": true, "1.9": true, "2.0": false, "10.0": false, "abc": false, "0.9": false} {
		if got := supportedVersion(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

func TestProcessAppliesTheEnvelopeRulesInOrder(t *testing.T) {
	get := []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	corr := []byte("0123456789abcdef")
	for _, tc := range []struct {
		name   string
		in     inbound
		action action
		stat   string
	}{
		{"QoS 0 is dropped before anything else", inbound{QoS: 0, Payload: get}, actDrop, ""},
		{"QoS 2 is dropped", inbound{QoS: 2, ResponseTopic: "r", CorrelationData: corr, Payload: get, Client: "c"}, actDrop, ""},
		{"no response topic is dropped", inbound{QoS: 1, CorrelationData: corr, Payload: get, Client: "c"}, actDrop, ""},
		{"forbidden topic beats a bad version", inbound{QoS: 1, ResponseTopic: RequestTopic, User: []userProp{{protocol.PropProtocolVersion, "9"}}}, actKick, ""},
		{"version beats missing correlation", inbound{QoS: 1, ResponseTopic: "r", User: []userProp{{protocol.PropProtocolVersion, "2.0"}}}, actReply, "505"},
		{"missing correlation", inbound{QoS: 1, ResponseTopic: "r", Payload: get, Client: "c"}, actReply, "400"},
		{"missing __srcId when the client is unknown", inbound{QoS: 1, ResponseTopic: "r", CorrelationData: corr, Payload: get}, actReply, "400"},
		{"__srcId stands in for the client", inbound{QoS: 1, ResponseTopic: "r", CorrelationData: corr, Payload: get, User: []userProp{{protocol.PropSourceID, "c"}}}, actReply, "200"},
		{"served", inbound{QoS: 1, ResponseTopic: "r", CorrelationData: corr, Payload: get, Client: "c"}, actReply, "200"},
		{"undecodable payload is a 200 with -ERR", inbound{QoS: 1, ResponseTopic: "r", CorrelationData: corr, Payload: []byte("GET k"), Client: "c"}, actReply, "200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := process(engine.New(engine.Config{}), &tc.in)
			if out.Action != tc.action {
				t.Fatalf("action %v, want %v (%s)", out.Action, tc.action, out.Reason)
			}
			if out.Action != actReply {
				if out.Reason == "" {
					t.Error("a refused request needs a reason for the log")
				}
				return
			}
			if stat, _ := lookup(out.Reply.User, protocol.PropStatus); stat != tc.stat {
				t.Fatalf("__stat %q, want %q (%v)", stat, tc.stat, out.Reply.User)
			}
			if len(out.Reply.Payload) == 0 {
				t.Fatal("empty payload")
			}
			if (tc.stat != "200") != (out.Reason != "") {
				t.Errorf("reason %q for status %s", out.Reason, tc.stat)
			}
		})
	}
}

func TestUndecodablePayloadIsASyntaxError(t *testing.T) {
	in := inbound{QoS: 1, ResponseTopic: "r", CorrelationData: []byte{1}, Payload: []byte("*1\r\n$3\r\nGE"), Client: "c"}
	out := process(engine.New(engine.Config{}), &in)
	if string(out.Reply.Payload) != "-ERR syntax error\r\n" {
		t.Fatalf("payload %q", out.Reply.Payload)
	}
	if _, ok := lookup(out.Reply.User, protocol.PropTimestamp); ok {
		t.Fatal("an error carries no __ts")
	}
	if out.Err != engine.ErrSyntax || out.Reason != "" {
		t.Fatalf("logged as reason %q, store error %q", out.Reason, out.Err)
	}
}
