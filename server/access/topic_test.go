package access

import (
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/ssgen/ssgen/internal/protocol"
)

func TestSubscribeAllowedProtectsOnlyWhatTheStateStoreWrites(t *testing.T) {
	const id = "c1" // hex 6331
	own := protocol.NotifyPrefix + "/6331/command/notify/+"
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{own, true},
		{protocol.NotifyPrefix + "/c1/command/notify/+", false}, // the service writes the hex level only
		{protocol.NotifyPrefix + "/6331/#", true},
		{protocol.NotifyPrefix + "/6332/command/notify/+", false},
		{protocol.NotifyPrefix + "/+/command/notify/+", false},
		{protocol.NotifyPrefix + "/#", false},
		{"clients/statestore/#", false},
		{"clients/statestore/v1/+/6331/command/notify/+", false},
		{"clients/c1/statestore/v1/x/command/invoke/response", true},
		{"clients/6331/statestore/v1/x/command/invoke/response", true},
		{"clients/c1/#", true},
		{"clients/c2/statestore/v1/x/command/invoke/response", false},          // Go layout
		{"clients/c2/statestore/v1/x/command/invoke", false},                   // .NET layout
		{"clients/c2/services/statestore/v1/x/command/invoke/response", false}, // Rust layout
		{"clients/c2/+/statestore/#", false},
		{"clients/c2/+/+/v1/#", false},
		{"clients/c2/statestore", false},
		{"clients/c2/#", false},
		{"clients/+/statestore/#", false},
		{"clients/+/+/v1/" + protocol.ServiceID + "/6332/command/notify/+", false}, // + can be "statestore"
		{"clients/+/v1/" + protocol.ServiceID + "/6332/command/notify/+", false},
		{"clients/+/v1/" + protocol.ServiceID + "/6331/command/notify/+", true},
		{"clients/#", false},
		{"#", false},
		{"+/c2/statestore/#", false},
		{"+/+/#", false},
		// Ordinary MQTT: the official SDKs' command invokers take their
		// answers under their own level, from other clients.
		{"clients/c2/rpc/samples/increment", true},
		{"clients/c2/rpc/#", true},
		{"clients/+/rpc/samples/+/increment", true},
		{"clients/c2/services/other/#", true},
		{"clients/+", true},
		{"clients/c2", true},
		{"clients", true},
		{"+/c2/x", true},
		{"+/c1/x", true},
		{"app/telemetry/#", true},
		{"$share/g/clients/c2/statestore/#", false},
		{"$SHARE/g/clients/c2/statestore/#", false}, // mochi reads the prefix in any case
		{"$share/g/clients/c2/rpc/x", true},
		{"$Share/g/#", false},
		{"$share/g/app/x", true},
		{"$SYS/#", true},
	} {
		if got := subscribeAllowed(id, tc.filter); got != tc.want {
			t.Errorf("subscribeAllowed(%q, %q) = %v, want %v", id, tc.filter, got, tc.want)
		}
	}
}

func TestSubscribeAllowedSpellsOutTheNotificationPrefix(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"clients/statestore", true},
		{"clients/statestore/v1", true},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8", true},
		{"clients/statestore/v2/x", false},
		{"clients/statestore/+/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/6331/#", false},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/+", false},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/6331", true},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/63", false},
	} {
		if got := subscribeAllowed("c1", tc.filter); got != tc.want {
			t.Errorf("subscribeAllowed(c1, %q) = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestSubscribeCheckAllocatesNothing(t *testing.T) {
	topic := "clients/c1/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response"
	notify := protocol.NotifyTopic("c1", []byte("key"))
	if n := testing.AllocsPerRun(100, func() {
		subscribeAllowed("c1", topic)
		subscribeAllowed("c1", notify)
	}); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}

// TestSubscribeAllowedKeepsLookalikeIDsApart pins the attacks on the old
// rule, which accepted an id and its hex in either case: a client whose id
// is the hex of another's, the reverse, and a client named "statestore".
func TestSubscribeAllowedKeepsLookalikeIDsApart(t *testing.T) {
	const victim, victimHex = "victim-app", "76696374696D2D617070"
	for _, tc := range []struct {
		client, filter string
		want           bool
	}{
		{victimHex, protocol.NotifyTopic(victim, []byte("b/secret")), false},
		{victimHex, protocol.NotifyPrefix + "/" + victimHex + "/command/notify/+", false},
		{victimHex, "clients/" + victimHex + "/statestore/v1/x/command/invoke/response", false},
		{victim, "clients/" + victimHex + "/#", true},
		{"statestore", "clients/statestore/#", false},
		{"statestore", protocol.NotifyPrefix + "/#", false},
		{"statestore", "clients/statestore/x", false},
		{"statestore", "clients/73746174657374" + "6F7265/#", true},
	} {
		if got := subscribeAllowed(tc.client, tc.filter); got != tc.want {
			t.Errorf("subscribeAllowed(%q, %q) = %v, want %v", tc.client, tc.filter, got, tc.want)
		}
	}
}

// TestNoTopicIsReadableByTwoClients checks the read rule against the
// ownership rule: a topic the state store writes, built on any level two
// lookalike ids could share, is delivered to at most one of them. (It once
// checked "clients/{level}/x" too: that is ordinary MQTT now, readable by
// all.)
func TestNoTopicIsReadableByTwoClients(t *testing.T) {
	ids := []string{"victim-app", "76696374696D2D617070", "76696374696d2d617070", "statestore",
		"73746174657374" + "6F7265", "1234", "\x12\x34", "c1", "6331", "3633333331",
		"AB", "4142", "A4C138F0E1D2", "00124B001CAF8E21"}
	for _, a := range ids {
		for _, b := range ids {
			if a == b {
				continue
			}
			for _, owner := range ids {
				hexOwner := strings.ToUpper(hex.EncodeToString([]byte(owner)))
				for _, topic := range []string{
					"clients/" + owner + "/statestore/v1/" + protocol.ServiceID + "/command/invoke/response",
					"clients/" + hexOwner + "/statestore/v1/" + protocol.ServiceID + "/command/invoke/response",
					"clients/" + owner + "/services/statestore/v1/" + protocol.ServiceID + "/command/invoke/response",
					"clients/" + hexOwner + "/statestore/v1/" + protocol.ServiceID + "/command/invoke",
					protocol.NotifyTopic(owner, []byte("k")),
					protocol.NotifyPrefix + "/" + owner + "/command/notify/6B",
				} {
					if subscribeAllowed(a, topic) && subscribeAllowed(b, topic) {
						t.Errorf("%q delivered to both %q and %q", topic, a, b)
					}
				}
			}
		}
	}
}

// TestAWillIsCheckedAgainWhenItFires covers the second check: a will that
// would break the rule when it fires is emptied, and a message without a
// topic is delivered to nobody.
func TestAWillIsCheckedAgainWhenItFires(t *testing.T) {
	g := &Hook{log: slog.New(slog.DiscardHandler)}
	cl := &mqtt.Client{ID: "attacker"}
	forged := mqtt.Will{TopicName: protocol.NotifyTopic("victim", []byte("k")), Payload: []byte("forged"), Retain: true, Qos: 1}
	got, err := g.OnWill(cl, forged)
	if err != nil || got.TopicName != "" || got.Payload != nil || got.Retain {
		t.Fatalf("OnWill = %+v, %v; want an empty will", got, err)
	}
	own := mqtt.Will{TopicName: "clients/attacker/gone", Payload: []byte("bye")}
	if got, _ := g.OnWill(cl, own); got.TopicName != own.TopicName {
		t.Fatalf("own will changed to %+v", got)
	}
	if g.OnACLCheck(&mqtt.Client{ID: "anyone"}, "", false) {
		t.Fatal("a message without a topic is delivered")
	}
}
