package bench

import (
	"bytes"
	"fmt"
	"log/slog"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/mochiclose"
)

// echoBroker is a mochi broker configured as the embedded server's (same
// capabilities, TCP on loopback) whose echo requests are answered inside
// the broker, in the requester's read goroutine, the way the embedded
// state store answers its requests. It is the ceiling of the embedded
// server: the same path without the state store's work.
type echoBroker struct {
	srv     *mqtt.Server
	replier *mqtt.Client
	topic   string
	shape   *echoShape
}

func startEchoBroker(topic string, shape *echoShape) (*echoBroker, error) {
	caps := mqtt.NewDefaultServerCapabilities()
	caps.Compatibilities.NoInheritedPropertiesOnAck = true
	caps.MaximumMessageExpiryInterval = 0
	caps.MaximumClientWritesPending = 16 << 10
	caps.MaximumInflight = 65535
	srv := mqtt.New(&mqtt.Options{
		InlineClient:           true,
		Capabilities:           caps,
		Logger:                 slog.New(slog.DiscardHandler),
		SysTopicResendInterval: 3600,
	})
	eb := &echoBroker{srv: srv, topic: topic, shape: shape}
	eb.replier = srv.NewClient(nil, mqtt.LocalListener, "ssgen-bench-echo", true)
	if err := srv.AddHook(new(allowAll), nil); err != nil {
		return nil, err
	}
	if err := srv.AddHook(&echoHook{eb: eb}, nil); err != nil {
		return nil, err
	}
	if err := srv.AddListener(listeners.NewTCP(listeners.Config{ID: "tcp", Address: "127.0.0.1:0"})); err != nil {
		return nil, err
	}
	if err := srv.Serve(); err != nil {
		_ = mochiclose.Close(srv)
		return nil, fmt.Errorf("bench: echo broker: %w", err)
	}
	return eb, nil
}

func (eb *echoBroker) url() string {
	l, _ := eb.srv.Listeners.Get("tcp")
	return "mqtt://" + l.Address()
}

// close stops the broker through mochiclose: a bench client disconnecting
// while mochi's own Close runs can deadlock it.
func (eb *echoBroker) close() { _ = mochiclose.Close(eb.srv) }

type echoHook struct {
	mqtt.HookBase
	eb *echoBroker
}

func (h *echoHook) ID() string { return "ssgen-bench-echo" }

func (h *echoHook) Provides(b byte) bool { return b == mqtt.OnPublish }

// OnPublish answers an echo request with a reply of the same size and
// shape and acknowledges the request without routing it.
func (h *echoHook) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.TopicName != h.eb.topic || cl.Net.Inline {
		return pk, nil
	}
	if pk.Properties.ResponseTopic == "" {
		return pk, packets.CodeSuccessIgnore
	}
	reply := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		PacketID:    1, // mochi wants one on a QoS 1 PUBLISH, even from an inline client
		TopicName:   pk.Properties.ResponseTopic,
		Payload:     bytes.Clone(pk.Payload),
		Properties:  h.eb.shape.mochiProps(pk.Properties.CorrelationData),
	}
	_ = h.eb.srv.InjectPacket(h.eb.replier, reply)
	return pk, packets.CodeSuccessIgnore
}

// allowAll admits everyone, as the embedded server does (mochi's own
// AllowHook package drags in a YAML library for its ledger).
type allowAll struct{ mqtt.HookBase }

func (allowAll) ID() string { return "allow-all" }

func (allowAll) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (allowAll) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (allowAll) OnACLCheck(*mqtt.Client, string, bool) bool { return true }
