package access

import (
	"bytes"
	"log/slog"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
)

// connectSeed encodes an MQTT 5 CONNECT body (the bytes after the fixed
// header), as a client would send it.
func connectSeed(f *testing.F, id string, will *packets.ConnectParams, user string, props packets.Properties) []byte {
	pk := packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Connect},
		ProtocolVersion: 5,
		Properties:      props,
		Connect: packets.ConnectParams{
			ProtocolName:     []byte("MQTT"),
			Clean:            true,
			Keepalive:        30,
			ClientIdentifier: id,
		},
	}
	if will != nil {
		pk.Connect.WillFlag = true
		pk.Connect.WillTopic, pk.Connect.WillPayload = will.WillTopic, will.WillPayload
		pk.Connect.WillQos, pk.Connect.WillRetain = will.WillQos, will.WillRetain
		pk.Connect.WillProperties = will.WillProperties
	}
	if user != "" {
		pk.Connect.UsernameFlag, pk.Connect.Username = true, []byte(user)
		pk.Connect.PasswordFlag, pk.Connect.Password = true, []byte("pw")
	}
	var buf bytes.Buffer
	if err := pk.ConnectEncode(&buf); err != nil {
		f.Fatal(err)
	}
	// Drop the fixed header: one type byte and the remaining length.
	b := buf.Bytes()[1:]
	for b[0]&0x80 != 0 {
		b = b[1:]
	}
	return b[1:]
}

// FuzzConnect feeds arbitrary CONNECT bodies (properties, will fields,
// credentials) through mochi's decoder and validation into the hook, as
// the embedded broker does, and checks the hook's rules: it lets a CONNECT
// in exactly when its client id is one the broker accepts (or none, to be
// assigned) and its will (if any) is one the client could publish, not
// retained on the state store's topics; a will that got in is left alone
// when it fires, and no input makes the hook panic.
func FuzzConnect(f *testing.F) {
	notify := protocol.NotifyTopic("victim-app", []byte("k"))
	forged := []byte("*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$6\r\nforged\r\n")
	f.Add(connectSeed(f, "c1", nil, "", packets.Properties{}))
	f.Add(connectSeed(f, "c1", nil, "alice", packets.Properties{
		SessionExpiryInterval: 0xFFFFFFFF, SessionExpiryIntervalFlag: true, ReceiveMaximum: 65535,
		User: []packets.UserProperty{{Key: "metriccategory", Val: "aiosdk-go"}},
	}))
	f.Add(connectSeed(f, "76696374696D2D617070", &packets.ConnectParams{
		WillTopic: notify, WillPayload: forged, WillQos: 1, WillRetain: true,
		WillProperties: packets.Properties{User: []packets.UserProperty{{Key: "__ts", Val: "001795310997834:00000:x"}}},
	}, "", packets.Properties{}))
	f.Add(connectSeed(f, "attacker", &packets.ConnectParams{WillTopic: "clients/victim-app/resp", WillPayload: []byte("+OK\r\n")}, "", packets.Properties{}))
	f.Add(connectSeed(f, "statestore", &packets.ConnectParams{WillTopic: "clients/statestore/x"}, "", packets.Properties{}))
	f.Add(connectSeed(f, "dropper", &packets.ConnectParams{WillTopic: "clients/dropper/gone", WillProperties: packets.Properties{WillDelayInterval: 5}}, "", packets.Properties{}))
	f.Add(connectSeed(f, "", &packets.ConnectParams{WillTopic: protocol.RequestTopic}, "", packets.Properties{}))

	broker := mqtt.New(&mqtt.Options{Logger: slog.New(slog.DiscardHandler)})
	g := &Hook{
		sec: Security{Passwords: Passwords{"alice": []byte("$2a$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinv")}, AllowAnonymous: true},
		log: slog.New(slog.DiscardHandler),
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect, Remaining: len(body)}}
		if err := pk.ConnectDecode(body); err != nil {
			return // mochi closes the connection on a decode error
		}
		cl := broker.NewClient(nil, "tcp", "", false)
		cl.ParseConnect("tcp", pk)
		if pk.ConnectValidate() != packets.CodeSuccess {
			return
		}
		id := pk.Connect.ClientIdentifier
		err := g.OnConnect(cl, pk)
		allowed := (id == "" || protocol.ValidClientID(id)) && (!pk.Connect.WillFlag ||
			protocol.MayPublish(cl.ID, pk.Connect.WillTopic) && !(pk.Connect.WillRetain && protocol.ServiceOwned(pk.Connect.WillTopic)))
		if (err == nil) != allowed {
			t.Fatalf("client %q, will %v on %q: OnConnect = %v", cl.ID, pk.Connect.WillFlag, pk.Connect.WillTopic, err)
		}
		if err != nil {
			return
		}
		_ = g.OnConnectAuthenticate(cl, pk)
		_ = g.IdentityOf(cl)
		if pk.Connect.WillFlag {
			w, err := g.OnWill(cl, cl.Properties.Will)
			if err != nil || w.TopicName != pk.Connect.WillTopic {
				t.Fatalf("an accepted will changed when it fired: %+v, %v", w, err)
			}
			_ = subscribeAllowed(cl.ID, w.TopicName)
		}
	})
}
