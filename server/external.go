package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session"
	"github.com/eclipse/paho.golang/paho/session/state"

	"github.com/ssgen/ssgen/internal/bufconn"
	"github.com/ssgen/ssgen/internal/pahoctx"
	"github.com/ssgen/ssgen/internal/pahostore"
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/internal/logtext"
)

// Reconnect backoff of external mode: doubling from the first delay up to
// the cap, each delay drawn from its upper half so that services restarted
// together do not hammer the broker in step.
const (
	backoffFirst = 50 * time.Millisecond
	backoffCap   = 5 * time.Second
	// connectTimeout bounds one dial + CONNECT + SUBSCRIBE attempt.
	connectTimeout = 10 * time.Second
	keepAlive      = 30
)

// external runs the state store as an ordinary client of another MQTT 5
// broker. It cannot see other clients' connections, so it never drops
// KEYNOTIFY registrations on a disconnect, cannot disconnect a client, and
// can only publish notifications to subscribers (see doc.go).
type external struct {
	s        *Server
	hostport string
	clientID string

	cur      atomic.Pointer[paho.Client] // the live connection, nil between connections
	requests *serializer[*paho.Publish]
	// dropped counts requests over the queue's limit; droppedLogged is
	// when that was last logged (Unix ns).
	dropped, droppedLogged atomic.Int64
	prober                 *brokerProbe
	ctx                    context.Context
	wg                     sync.WaitGroup
	// attached, set by tests before Start, runs once each connection has
	// the request subscription, before connect returns.
	attached func()
}

func newExternal(s *Server) (*external, error) {
	hp, err := brokerAddr(s.opts.Broker)
	if err != nil {
		return nil, err
	}
	id := s.opts.ClientID
	if id == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		id = "ssgen-statestore-" + hex.EncodeToString(b[:])
	}
	x := &external{s: s, hostport: hp, clientID: id, prober: newBrokerProbe(id, s.opts.SlowBroker, nil)}
	x.requests = newSerializer(x.handle)
	// As the embedded broker's Receive Maximum bounds one client's
	// unacknowledged requests, and nothing may be answered once the
	// service closes.
	x.requests.limit = &serialLimit[*paho.Publish]{perKey: DefaultMaxInflight, perKeyBytes: maxQueuedRequestBytes / 4,
		total: maxQueuedRequestBytes, keys: maxQueuedRequesters, size: requestSize}
	x.requests.discard = true
	return x, nil
}

// brokerAddr turns mqtt://host[:port] (or tcp://) into host:port.
func brokerAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: broker URL %q: %v", ErrInvalidOptions, raw, err)
	}
	if u.Scheme != "mqtt" && u.Scheme != "tcp" {
		return "", fmt.Errorf("%w: broker URL %q: scheme must be mqtt:// or tcp://", ErrInvalidOptions, raw)
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return "", fmt.Errorf("%w: broker URL %q: want mqtt://host:port", ErrInvalidOptions, raw)
	}
	port := u.Port()
	if port == "" {
		port = "1883"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

func (x *external) addr() string { return x.hostport }

// start connects once, failing if the broker cannot be reached, then keeps
// the connection up in the background until ctx ends.
func (x *external) start(ctx context.Context) error {
	x.ctx = ctx
	c, err := x.connect(ctx)
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrConnect, x.hostport, err)
	}
	x.wg.Add(1)
	go x.keepConnected(ctx, c)
	return nil
}

func (x *external) keepConnected(ctx context.Context, c *paho.Client) {
	defer x.wg.Done()
	for {
		x.cur.Store(c)
		if x.prober.enabled() {
			x.wg.Add(1)
			go func(c *paho.Client) {
				defer x.wg.Done()
				x.probe(ctx, c)
			}(c)
		}
		select {
		case <-ctx.Done():
			x.cur.Store(nil)
			_ = c.Disconnect(&paho.Disconnect{ReasonCode: 0})
			<-c.Done()
			return
		case <-c.Done():
		}
		x.cur.Store(nil)
		x.s.log.Warn("connection to broker lost; reconnecting", "broker", x.hostport)
		delay := backoffFirst
		for {
			wait := delay/2 + mrand.N(delay/2+1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			var err error
			if c, err = x.connect(ctx); err == nil {
				x.s.log.Info("reconnected to broker", "broker", x.hostport)
				break
			}
			x.s.log.Warn("reconnect failed", "broker", x.hostport, "error", err, "retry_in", delay)
			delay = min(2*delay, backoffCap)
		}
	}
}

// connect dials, connects with a clean session and subscribes to the
// request topic. A clean session each time is deliberate: requests sent
// while the service was away have timed out at their callers anyway.
func (x *external) connect(ctx context.Context) (*paho.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", x.hostport)
	if err != nil {
		return nil, err
	}
	c := paho.NewClient(paho.ClientConfig{
		ClientID:          x.clientID,
		Conn:              bufconn.New(conn),
		Session:           ackLogger{State: pahostore.NewState(), log: x.s.log, probe: x.prober},
		PacketTimeout:     connectTimeout,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){x.received},
		OnClientError: func(err error) {
			x.s.log.Debug("broker connection error", "error", err)
		},
		OnServerDisconnect: func(d *paho.Disconnect) {
			x.s.log.Warn("broker sent DISCONNECT", "reason_code", d.ReasonCode)
		},
	})
	ack, err := c.Connect(ctx, &paho.Connect{ClientID: x.clientID, CleanStart: true, KeepAlive: keepAlive})
	if err != nil {
		conn.Close()
		if ack != nil {
			return nil, fmt.Errorf("CONNACK reason code 0x%02X: %w", ack.ReasonCode, err)
		}
		return nil, err
	}
	// Requests can arrive as soon as the broker has the subscription, even
	// before SUBACK is read here: answers must already have a connection
	// to go out on.
	x.cur.Store(c)
	if x.s.opts.Replica != nil {
		// A server sharing a replica may follow one that died between
		// answering a change and notifying it, or notifications may have
		// been lost while this connection was down: every registration is
		// told its key's state now, before any request is taken, so that
		// no change made here is notified ahead of it (they queue behind it
		// per watcher, and the engine orders them).
		x.s.eng.NotifyCurrent()
	}
	// Retain Handling 2: a retained request is not replayed to this new
	// subscription; Retain As Published: one published live keeps its
	// retain flag, so that process refuses it too.
	// The wait for SUBACK ends with the connection (pahoctx): a broker
	// restarted just after CONNACK must not hold this attempt for
	// connectTimeout.
	subCtx, stop := pahoctx.Bound(ctx, c)
	defer stop()
	sub, err := c.Subscribe(subCtx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: RequestTopic, QoS: 1, NoLocal: true, RetainHandling: 2, RetainAsPublished: true},
	}})
	if err == nil && (len(sub.Reasons) != 1 || sub.Reasons[0] >= 0x80) {
		err = fmt.Errorf("SUBACK refused the request topic: %v", sub.Reasons)
	}
	if err != nil {
		x.cur.Store(nil)
		_ = c.Disconnect(&paho.Disconnect{})
		return nil, err
	}
	x.s.log.Info("attached to broker", "broker", x.hostport, "client_id", x.clientID)
	if x.attached != nil {
		x.attached()
	}
	return c, nil
}

// received runs on paho's delivery goroutine, which must never block: it
// only queues the request behind earlier ones of the same client.
func (x *external) received(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	if x.probeReceived(p) {
		return true, nil
	}
	if p.Topic != RequestTopic {
		return false, nil
	}
	key := ""
	if p.Properties != nil {
		for _, u := range p.Properties.User {
			if u.Key == protocol.PropSourceID {
				key = u.Value
				break
			}
		}
		if key == "" {
			key = "\x00" + p.Properties.ResponseTopic
		}
	}
	if x.requests.push(key, p) {
		x.overflow(key)
	}
	return true, nil
}

// maxQueuedRequestBytes bounds the requests (by requestSize) an attached
// service holds received and not yet decided, over all clients; one
// client may have DefaultMaxInflight of them and a quarter of the bytes,
// and maxQueuedRequesters clients may have some (each has a goroutine).
const (
	maxQueuedRequestBytes = 64 << 20
	maxQueuedRequesters   = 4096
)

// requestSize is what a queued request weighs in maxQueuedRequestBytes:
// its bytes and a fixed share for the structures around them.
func requestSize(p *paho.Publish) int64 {
	n := int64(len(p.Payload) + len(p.Topic) + 512)
	if pp := p.Properties; pp != nil {
		n += int64(len(pp.ResponseTopic) + len(pp.CorrelationData))
		for _, u := range pp.User {
			n += int64(len(u.Key) + len(u.Value))
		}
	}
	return n
}

// overflow counts a request dropped because its client, or all clients
// together, had too many waiting (the client's request times out), and
// logs the drops at most every overflowLogEvery.
func (x *external) overflow(client string) {
	n := x.dropped.Add(1)
	now := time.Now()
	last := x.droppedLogged.Load()
	if now.UnixNano()-last < int64(overflowLogEvery) || !x.droppedLogged.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	x.s.log.Warn("requests dropped: more were waiting to be decided than the service holds (a client with "+
		strconv.Itoa(DefaultMaxInflight)+" or 16 MiB waiting, "+strconv.Itoa(maxQueuedRequesters)+" clients with some, or 64 MiB in all); their senders get no answer",
		"client", logtext.Clip(client, 200), "dropped_so_far", n)
}

const overflowLogEvery = 10 * time.Second

func (x *external) handle(p *paho.Publish) {
	src := ""
	if p.Properties != nil {
		for _, u := range p.Properties.User {
			if u.Key == protocol.PropSourceID {
				src = u.Value
				break
			}
		}
	}
	x.s.serve(src, func() (inbound, string) {
		in := inbound{QoS: p.QoS, Retain: p.Retain, Payload: p.Payload}
		if p.Properties != nil {
			in.ResponseTopic = p.Properties.ResponseTopic
			in.CorrelationData = p.Properties.CorrelationData
			in.User = make([]userProp, len(p.Properties.User))
			for i, u := range p.Properties.User {
				in.User[i] = userProp{u.Key, u.Value}
			}
		}
		if slices.Contains(x.s.opts.ReservedClientIDs, src) {
			// The other broker lets anyone claim any __srcId; the ids of the
			// service's tools are never a client's.
			return in, "__srcId is reserved for the service's web console"
		}
		return in, ""
	}, nil, // an attached client cannot disconnect anyone; dropping is all it can do
		func(out outcome, _ bool) { x.respond(src, &out) })
}

// respond publishes the answer to a request of src.
func (x *external) respond(src string, out *outcome) {
	r := out.Reply
	err := x.publish(&paho.Publish{
		QoS:     1,
		Topic:   r.Topic,
		Payload: r.Payload,
		Properties: &paho.PublishProperties{
			ContentType:     protocol.ContentType,
			CorrelationData: r.CorrelationData,
			User:            pahoProps(r.User),
		},
	})
	if err != nil {
		x.s.log.Warn("response lost", "client", src, "error", err)
	}
}

// drop has nothing to un-count: queued counts nothing.
func (x *external) drop(engine.Notification) {}

// queued admits every notification: the other broker bounds what it holds
// for a client.
func (x *external) queued(engine.Notification) bool { return true }

// deliver publishes a notification; only clients subscribed to its topic
// receive it.
func (x *external) deliver(n engine.Notification) {
	x.s.notesSent.Add(1)
	err := x.publish(&paho.Publish{
		QoS:     1,
		Topic:   NotifyTopic(n.Client, n.Key),
		Payload: n.Payload,
		Properties: &paho.PublishProperties{
			ContentType: protocol.ContentType,
			User:        pahoProps(notificationProps(n)),
		},
	})
	if err != nil {
		x.s.log.Warn("notification lost", "client", n.Client, "error", err)
	}
}

var errNotConnected = errors.New("not connected to the broker")

// publish sends at QoS 1 on the live connection without waiting for the
// PUBACK: answers to one client still go out in order (paho writes the
// packet in the call) and the broker's Receive Maximum still bounds them
// (the session's send quota), but the next request no longer waits for a
// broker round trip. ackLogger reports PUBACKs that refuse a message. It
// gives up when the connection or the server ends while waiting for quota.
func (x *external) publish(p *paho.Publish) error {
	c := x.cur.Load()
	if c == nil {
		return errNotConnected
	}
	_, err := c.PublishWithOptions(x.ctx, p, paho.PublishOptions{Method: paho.PublishMethod_AsyncSend})
	return err
}

// ackLogger is the service connection's session state; it logs every
// PUBACK that refuses a response or notification (reason code >= 0x80;
// mosquitto's 0x10, "no subscribers", only means the client has gone).
type ackLogger struct {
	*state.State
	log   *slog.Logger
	probe *brokerProbe // its own round-trip probes are not responses
}

func (a ackLogger) AddToSession(ctx context.Context, p session.Packet, resp chan<- packets.ControlPacket) error {
	err := a.State.AddToSession(ctx, p, resp)
	if err == nil {
		a.probe.sent(p)
	}
	return err
}

func (a ackLogger) PacketReceived(cp *packets.ControlPacket, pubs chan<- *packets.Publish) error {
	if pa, ok := cp.Content.(*packets.Puback); ok && a.probe.acked(pa) {
		return a.State.PacketReceived(cp, pubs)
	}
	if pa, ok := cp.Content.(*packets.Puback); ok && pa.ReasonCode >= 0x80 {
		reason := ""
		if pa.Properties != nil {
			reason = pa.Properties.ReasonString
		}
		a.log.Warn("broker refused a response or notification", "reason_code", fmt.Sprintf("0x%02X", pa.ReasonCode), "reason", reason)
	}
	return a.State.PacketReceived(cp, pubs)
}

func (x *external) close() error {
	x.wg.Wait()
	x.requests.close()
	return nil
}

func pahoProps(props []userProp) paho.UserProperties {
	out := make(paho.UserProperties, len(props))
	for i, p := range props {
		out[i] = paho.UserProperty{Key: p.Key, Value: p.Value}
	}
	return out
}
