package access

import (
	"log/slog"
	"strings"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

func quietHook(sec Security, session func(string) (*mqtt.Client, bool)) *Hook {
	return &Hook{sec: sec, log: slog.New(slog.DiscardHandler), session: session}
}

func userClient(id, user string) *mqtt.Client {
	cl := &mqtt.Client{ID: id}
	cl.Properties.Username = []byte(user)
	return cl
}

// Found by the attacker's review: mochi registers a session only after
// the authentication hook, so two identities could both pass the takeover
// check for a free id, and the later one took over the earlier's session
// (its subscriptions and KEYNOTIFY registrations). The claim closes that
// window.
func TestTakeOverCheckAndClaimAreOneStep(t *testing.T) {
	registered := map[string]*mqtt.Client{}
	g := quietHook(Security{Passwords: Passwords{}}, func(id string) (*mqtt.Client, bool) {
		cl, ok := registered[id]
		return cl, ok
	})
	alice, bob := userClient("victim-app", "alice"), userClient("victim-app", "bob")
	if !g.mayTakeOver(alice) {
		t.Fatal("alice refused a free id")
	}
	if g.mayTakeOver(bob) {
		t.Fatal("bob passed for an id alice is connecting with")
	}
	registered["victim-app"] = alice // mochi's table, then the hook
	g.OnSessionEstablished(alice, packets.Packet{})
	if g.mayTakeOver(bob) {
		t.Fatal("bob passed for an id alice holds")
	}
	if !g.mayTakeOver(userClient("victim-app", "alice")) {
		t.Fatal("alice could not take her own id over (a reconnect)")
	}
	if len(g.claims) != 1 {
		t.Fatalf("claims %v", g.claims)
	}
}

// Found by the attacker's review: mochi's assigned ids are sequential.
func TestAssignedClientIDsAreRandom(t *testing.T) {
	g := quietHook(Security{}, nil)
	seen := map[string]bool{}
	for range 100 {
		cl := &mqtt.Client{ID: "predictable"}
		if err := g.OnConnect(cl, packets.Packet{}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(cl.ID, "ssgen-") || cl.Properties.Props.AssignedClientID != cl.ID || seen[cl.ID] {
			t.Fatalf("assigned id %q (announced %q)", cl.ID, cl.Properties.Props.AssignedClientID)
		}
		seen[cl.ID] = true
	}
	cl := &mqtt.Client{ID: "chosen"}
	_ = g.OnConnect(cl, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "chosen"}})
	if cl.ID != "chosen" {
		t.Fatalf("a chosen id became %q", cl.ID)
	}
}

// Found by the attacker's review: a will delayed past a session that ends
// at disconnect waited under the bare id, for anyone to cancel.
func TestAWillDelayEndsWithTheSession(t *testing.T) {
	g := quietHook(Security{}, nil)
	for _, expiry := range []uint32{0, 3, 60} {
		cl := &mqtt.Client{ID: "c1"}
		cl.Properties.Will = mqtt.Will{TopicName: "status/c1", WillDelayInterval: 10}
		cl.Properties.Props.SessionExpiryInterval = expiry
		pk := packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "c1", WillFlag: true, WillTopic: "status/c1"}}
		if err := g.OnConnect(cl, pk); err != nil {
			t.Fatal(err)
		}
		if got, want := cl.Properties.Will.WillDelayInterval, min(10, expiry); got != want {
			t.Errorf("session expiry %d: will delay %d, want %d", expiry, got, want)
		}
	}
}

func TestRetainIsRefusedOnTheStateStoresTopics(t *testing.T) {
	g := quietHook(Security{}, nil)
	cl := &mqtt.Client{ID: "c1"}
	for _, tc := range []struct {
		topic  string
		retain bool
		want   error
	}{
		{"clients/c1/services/statestore/v1/x/response", true, packets.ErrRetainNotSupported},
		{"clients/c1/statestore/v1/x/response", true, packets.ErrRetainNotSupported},
		{"clients/c1/services/statestore/v1/x/response", false, nil},
		{"clients/c1/config", true, nil},
		{"app/c1/config", true, nil},
	} {
		pk := packets.Packet{TopicName: tc.topic, FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: tc.retain}}
		if _, err := g.OnPublish(cl, pk); err != tc.want {
			t.Errorf("%s retain %v: %v, want %v", tc.topic, tc.retain, err, tc.want)
		}
		will := packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "c1", WillFlag: true, WillTopic: tc.topic, WillRetain: tc.retain}}
		if err := g.OnConnect(&mqtt.Client{ID: "c1"}, will); err != tc.want && (tc.want != nil || err != nil) {
			t.Errorf("will on %s retain %v: %v, want %v", tc.topic, tc.retain, err, tc.want)
		}
	}
}
