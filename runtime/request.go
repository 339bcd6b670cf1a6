package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// reqOpts are the optional parts of a request envelope.
type reqOpts struct {
	fencing hlc.HLC // __ft when non-zero
	persist bool    // aio-persistence=true
	// notify: the request registers for notifications (KEYNOTIFY without
	// STOP), so it is not sent on a connection whose notification
	// subscription the broker refused.
	notify bool
}

// response is a decoded, checked state store response.
type response struct {
	val     resp3.Value
	version hlc.HLC // __ts; zero when absent
}

// invoke sends one request and waits for its response. op names the verb
// in errors. It returns the connection the request went over, which
// KEYNOTIFY bookkeeping needs.
func (c *Client) invoke(ctx context.Context, op string, args [][]byte, o reqOpts) (response, *conn, error) {
	c.st.inFlight.Add(1)
	defer c.st.inFlight.Add(-1)
	r, cn, err := c.roundTrip(ctx, op, args, o)
	if err != nil {
		c.st.errors.Add(1)
		switch {
		case errors.Is(err, ErrTimeout):
			c.st.timeouts.Add(1)
		case errors.Is(err, ErrConnectionLost):
			c.st.connLost.Add(1)
		}
	}
	return r, cn, err
}

func (c *Client) roundTrip(parent context.Context, op string, args [][]byte, o reqOpts) (response, *conn, error) {
	if c.isClosing() {
		return response{}, nil, ErrClosed
	}
	if err := parent.Err(); err != nil {
		// Nothing is sent under a context that has already ended (a
		// connection and a send slot may well be free, and paho would
		// write the request).
		return response{}, nil, c.waitError(parent, op, err, true)
	}
	deadline := time.Now().Add(c.cfg.Timeout)
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()

	cn, err := c.current(ctx)
	if err != nil {
		return response{}, nil, c.waitError(parent, op, err, false)
	}
	if err := c.sem.acquire(ctx, c.closing); err != nil {
		return response{}, nil, c.waitError(parent, op, err, true)
	}
	defer c.sem.release()
	ts, err := c.clock.Now()
	if err != nil {
		return response{}, nil, wrap(err, op)
	}
	cl := c.getCall()
	defer c.putCall(cl) // runs after remove, below
	cl.id = newCorrelationID()
	c.pending.add(cl.id, cl.resp)
	defer c.pending.remove(cl.id)
	cl.payload = resp3.AppendCommand(cl.payload, args...)

	acks := make(chan packets.ControlPacket, 1)
	pctx := withPuback(ctx, acks)
	var noServiceSince time.Time // the first PUBACK 0x10
	for attempt := 1; ; attempt++ {
		if cn.ctx.Err() != nil { // dropped while we queued, or before the first send
			if cn, err = c.current(ctx); err != nil {
				return response{}, nil, c.waitError(parent, op, err, false)
			}
		}
		if o.notify && cn.notifErr != nil {
			return response{}, cn, cn.notifErr
		}
		pub := c.envelope(cl, ts, o, deadline)
		if cn.maxPkt > 0 {
			if n := publishSize(pub); n > cn.maxPkt {
				return response{}, cn, &PacketTooLargeError{Op: op, Size: n, Max: cn.maxPkt}
			}
		}
		c.st.requests.Add(1)
		_, err = cn.pc.PublishWithOptions(pctx, pub, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
		switch {
		case err == nil:
		case c.isClosing():
			return response{}, cn, ErrClosed
		case errors.Is(err, session.ErrNoConnection) && ctx.Err() == nil:
			// paho refused before anything was written: the connection is
			// going down, the request never left, the next one can take it.
			select {
			case <-cn.ctx.Done():
			case <-ctx.Done():
			case <-c.closing:
			}
			continue
		case ctx.Err() != nil && cn.ctx.Err() == nil:
			return response{}, cn, c.waitError(parent, op, ctx.Err(), true)
		default:
			return response{}, cn, c.lostError(op, cn, err)
		}

		p, ack, err := c.await(ctx, cn, cl.resp, acks)
		switch {
		case p != nil:
			r, err := c.decode(op, p)
			return r, cn, err
		case err != nil:
			return response{}, cn, c.endError(parent, op, cn, err)
		case ack.ReasonCode == pubackNoSubscribers:
			// No service received the request (an external state store not
			// attached yet, or reconnecting): sending it again is safe.
			c.st.noService.Add(1)
			delay := min(c.backoff.delay(attempt), time.Second)
			if noServiceSince.IsZero() {
				noServiceSince = time.Now()
				c.log.Debug("no state store subscribed to the request topic; retrying")
			}
			if w := c.cfg.NoServiceWait; w > 0 {
				left := w - time.Since(noServiceSince)
				if left <= 0 {
					return response{}, cn, wrap(ErrNoService, op)
				}
				delay = min(delay, left)
			}
			if err := c.pause(ctx, cn, delay); err != nil {
				return response{}, cn, c.endError(parent, op, cn, err)
			}
		default:
			reason := ""
			if ack.Properties != nil {
				reason = ack.Properties.ReasonString
			}
			return response{}, cn, wrap(&BrokerError{Packet: "PUBACK", ReasonCode: ack.ReasonCode, Reason: reason}, op)
		}
	}
}

// await waits for the response to a request just published, or for a
// PUBACK that refuses it (reason code 0x10 or >= 0x80), whichever comes
// first; a successful PUBACK only means the wait goes on. It returns the
// response, or the refusing PUBACK, or the error that ended the wait:
// ctx's, ErrClosed, or errConnDropped.
func (c *Client) await(ctx context.Context, cn *conn, ch <-chan *paho.Publish, acks <-chan packets.ControlPacket) (*paho.Publish, *packets.Puback, error) {
	for {
		select {
		case p := <-ch:
			return p, nil, nil
		case cp := <-acks:
			pa, ok := cp.Content.(*packets.Puback)
			if !ok { // paho dropped the request from the session: the connection went
				return nil, nil, errConnDropped
			}
			if pa.ReasonCode == pubackNoSubscribers || pa.ReasonCode >= 0x80 {
				select {
				case p := <-ch: // a response came anyway: it is the answer
					return p, nil, nil
				default:
				}
				return nil, pa, nil
			}
			acks = nil
		case <-ctx.Done():
		case <-cn.ctx.Done():
		case <-c.closing:
		}
		if ctx.Err() != nil || cn.ctx.Err() != nil || c.isClosing() {
			select {
			case p := <-ch: // a response that raced the end wins
				return p, nil, nil
			default:
			}
			switch {
			case c.isClosing():
				return nil, nil, ErrClosed
			case cn.ctx.Err() != nil:
				return nil, nil, errConnDropped
			}
			return nil, nil, ctx.Err()
		}
	}
}

// pause sleeps d, or less when ctx ends, the connection drops or the
// client closes.
func (c *Client) pause(ctx context.Context, cn *conn, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-cn.ctx.Done():
		return errConnDropped
	case <-c.closing:
		return ErrClosed
	}
}

// errConnDropped marks a wait that ended because its connection did.
var errConnDropped = errors.New("connection dropped")

// endError turns what ended a request's wait into the caller's error.
func (c *Client) endError(parent context.Context, op string, cn *conn, err error) error {
	switch {
	case errors.Is(err, ErrClosed) || c.isClosing():
		return ErrClosed
	case errors.Is(err, errConnDropped):
		return c.lostError(op, cn, err)
	}
	return c.waitError(parent, op, err, true)
}

// lostError is the error of a request whose connection failed under it.
func (c *Client) lostError(op string, cn *conn, err error) error {
	if cause := context.Cause(cn.ctx); cn.ctx.Err() != nil && cause != nil {
		err = cause
	}
	return &connLostError{op: op, cause: err}
}

const pubackNoSubscribers = 0x10

// publishSize is the encoded size of an MQTT 5 QoS 1 PUBLISH with the
// properties envelope sets.
func publishSize(p *paho.Publish) int {
	props := 0
	if pp := p.Properties; pp != nil {
		if pp.PayloadFormat != nil {
			props += 2
		}
		if pp.MessageExpiry != nil {
			props += 5
		}
		if pp.ContentType != "" {
			props += 3 + len(pp.ContentType)
		}
		if pp.ResponseTopic != "" {
			props += 3 + len(pp.ResponseTopic)
		}
		if pp.CorrelationData != nil {
			props += 3 + len(pp.CorrelationData)
		}
		for _, u := range pp.User {
			props += 5 + len(u.Key) + len(u.Value)
		}
	}
	rest := 2 + len(p.Topic) + 2 + vbiLen(props) + props + len(p.Payload)
	return 1 + vbiLen(rest) + rest
}

func vbiLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	}
	return 4
}

// waitError turns the end of a wait into the error the caller sees: the
// caller's own cancellation as is, any deadline as a *TimeoutError.
func (c *Client) waitError(parent context.Context, op string, err error, connected bool) error {
	switch {
	case errors.Is(err, ErrClosed) || c.isClosing():
		return ErrClosed
	case parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded):
		return wrap(parent.Err(), op)
	case errors.Is(err, context.DeadlineExceeded):
		return &TimeoutError{Op: op, Connected: connected}
	}
	return wrap(err, op)
}

// envelope builds the request PUBLISH (docs/wire-protocol.md) in cl, from its payload
// and correlation id.
func (c *Client) envelope(cl *call, ts hlc.HLC, o reqOpts, deadline time.Time) *paho.Publish {
	// Message Expiry is the time left, rounded up to whole seconds, so the
	// broker drops a request its sender no longer waits for.
	left := time.Until(deadline)
	cl.expiry = uint32(min(max((left+time.Second-1)/time.Second, 1), math.MaxUint32))
	id := c.cfg.ClientID
	user := append(cl.user[:0],
		paho.UserProperty{Key: protocol.PropSourceID, Value: id},
		paho.UserProperty{Key: protocol.PropTimestamp, Value: ts.String()},
		paho.UserProperty{Key: protocol.PropProtocolVersion, Value: protocol.ProtocolVersion},
		paho.UserProperty{Key: protocol.PropPartition, Value: id},
		paho.UserProperty{Key: protocol.PropHighPriority, Value: ""},
	)
	if !o.fencing.IsZero() {
		user = append(user, paho.UserProperty{Key: protocol.PropFencingToken, Value: o.fencing.String()})
	}
	if o.persist {
		user = append(user, paho.UserProperty{Key: protocol.PropPersistence, Value: protocol.PersistenceOn})
	}
	if c.cfg.requestProps != nil {
		user = append(user, c.cfg.requestProps(cl.payload)...)
	}
	cl.props = paho.PublishProperties{
		CorrelationData: cl.id[:],
		ContentType:     protocol.ContentType,
		ResponseTopic:   c.respTopic,
		PayloadFormat:   &cl.format, // 0: unspecified bytes
		MessageExpiry:   &cl.expiry,
		User:            user,
	}
	cl.pub = paho.Publish{QoS: 1, Topic: RequestTopic, Payload: cl.payload, Properties: &cl.props}
	return &cl.pub
}

// decode checks the response envelope (__stat, __ts) and parses the
// payload. A "-ERR" payload becomes a *ServiceError.
//
// A present __ts must parse and pass the clock's drift check on every
// reply. A reply whose outcome hands a version to the caller (see
// carriesVersion) must also have one: without it the call fails with a
// *ProtocolError matching ErrInvalidVersion, never a zero version that
// could become an unfenced "fencing token".
func (c *Client) decode(op string, p *paho.Publish) (response, error) {
	var stat, msg, pname, pval, supMaj, ts string
	var hasStat, hasTS bool
	if p.Properties != nil {
		for _, u := range p.Properties.User {
			switch u.Key {
			case protocol.PropStatus:
				stat, hasStat = u.Value, true
			case protocol.PropStatusMessage:
				msg = u.Value
			case protocol.PropPropertyName:
				pname = u.Value
			case protocol.PropPropertyValue:
				pval = u.Value
			case protocol.PropSupportedMajor:
				supMaj = u.Value
			case protocol.PropTimestamp:
				ts, hasTS = u.Value, true
			}
		}
	}
	if !hasStat {
		return response{}, &ProtocolError{Op: op, Reason: "response has no __stat"}
	}
	code, err := strconv.Atoi(stat)
	if err != nil {
		return response{}, &ProtocolError{Op: op, Reason: fmt.Sprintf("__stat %q is not a number", stat)}
	}
	if code != protocol.StatusOK {
		return response{}, &RPCError{Status: code, Message: msg, PropertyName: pname, PropertyVal: pval, SupportedMajor: supMaj}
	}
	var r response
	if hasTS {
		v, err := hlc.Parse(ts)
		if err != nil {
			return response{}, &ProtocolError{Op: op, Reason: "response __ts", Err: fmt.Errorf("%w: %w", ErrInvalidVersion, err)}
		}
		if _, err := c.clock.Update(v); err != nil {
			return response{}, wrap(err, op+": response timestamp")
		}
		r.version = v
	}
	r.val, err = resp3.ParseResponse(p.Payload)
	if err != nil {
		return response{}, &ProtocolError{Op: op, Reason: "response payload", Err: err}
	}
	if r.val.Kind == resp3.KindError {
		return response{}, &ServiceError{Text: r.val.ErrorText()}
	}
	if r.version.Wall == 0 && carriesVersion(op, r.val) {
		reason := "response has no __ts"
		if hasTS {
			reason = "response __ts " + strconv.Quote(ts) + " is the zero clock"
		}
		return response{}, &ProtocolError{Op: op, Reason: reason, Err: ErrInvalidVersion}
	}
	return r, nil
}

// carriesVersion tells whether the reply v to op hands the caller a
// version, and so must carry a __ts: a stored SET (its version becomes a
// lease's fencing token), a GET hit (the key's version), a DEL or VDEL
// that answered 1 or 0 (the deletion's version). A GET miss has no __ts by
// contract (that is how "absent" is told); a failed condition (SET or VDEL
// ":-1") and KEYNOTIFY return no version, so they are accepted without
// one, although the contract has the service send it.
func carriesVersion(op string, v resp3.Value) bool {
	switch op {
	case protocol.VerbSet:
		return v.Kind == resp3.KindSimple && string(v.Str) == protocol.ReplyOK
	case protocol.VerbGet:
		return v.Kind == resp3.KindBulk
	case protocol.VerbDel, protocol.VerbVDel:
		return v.Kind == resp3.KindInteger && (v.Int == 0 || v.Int == 1)
	}
	return false
}

func unexpected(op string, v resp3.Value) error {
	return &ProtocolError{Op: op, Reason: "unexpected " + v.Kind.String() + " response"}
}
