package runtime

import (
	"context"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho/session"
	"github.com/eclipse/paho.golang/paho/session/state"
)

// connSession is a connection's session state (see conn). paho reports a server DISCONNECT to the session before it
// tears the connection down and long before OnServerDisconnect runs, so
// this is where the connection's context learns the broker's reason first.
type connSession struct {
	*state.State
	cancel context.CancelCauseFunc
}

func (s connSession) ConnectionLost(dp *packets.Disconnect) error {
	if dp != nil {
		reason := ""
		if dp.Properties != nil {
			reason = dp.Properties.ReasonString
		}
		s.cancel(&BrokerError{Packet: "DISCONNECT", ReasonCode: dp.ReasonCode, Reason: reason})
	}
	// Forget our side of the session: every request in flight on this
	// connection has just been failed with ErrConnectionLost, and paho
	// would otherwise resend it after the reconnect, so that the service
	// applies it later, behind writes that others made and got
	// acknowledged meanwhile (or, for a request the broker refuses as too
	// large, drop the connection at every reconnect). A Session Expiry of 0
	// in what the state sees makes it clear its stores; the broker's
	// session (subscriptions, queued messages) stays, and the next CONNACK
	// restores the interval. Messages the broker redelivers are taken as
	// new: a late response is dropped, a notification is reconciled by the
	// watchers' Resync.
	zero := uint32(0)
	forget := &packets.Disconnect{Properties: &packets.Properties{SessionExpiryInterval: &zero}}
	if dp != nil {
		forget.ReasonCode = dp.ReasonCode
	}
	return s.State.ConnectionLost(forget)
}

// Close is not passed on: the Client closes each connection's state
// itself, once the connection is over.
func (s connSession) Close() error { return nil }

// pubackKey is the context key under which a request passes the channel
// that is to receive its PUBACK. roundTrip publishes with paho's AsyncSend,
// which returns once the PUBLISH is written, and then waits for whichever
// comes first: the response, or a PUBACK (that matters only when it
// refuses the request). paho hands the context of the publish on to the
// session, so AddToSession finds the channel there and has the session
// deliver the acknowledgement to it instead of to paho's own channel, which
// nobody reads after an AsyncSend.
type pubackKey struct{}

func withPuback(ctx context.Context, ch chan packets.ControlPacket) context.Context {
	return context.WithValue(ctx, pubackKey{}, ch)
}

func (s connSession) AddToSession(ctx context.Context, p session.Packet, resp chan<- packets.ControlPacket) error {
	if ch, ok := ctx.Value(pubackKey{}).(chan packets.ControlPacket); ok {
		resp = ch
	}
	return s.State.AddToSession(ctx, p, resp)
}
