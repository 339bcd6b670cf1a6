package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// The raw echo's topics live outside the state store's namespace so that
// they never reach it.
const rawTopicRoot = "ssgen-bench/"

// errRawTimeout is a raw echo request that got no reply in time.
var errRawTimeout = errors.New("bench: raw echo: no reply in time")

// rawConn is one bare paho connection that routes replies by correlation
// data to the goroutine waiting for them.
type rawConn struct {
	pc      *paho.Client
	mu      sync.Mutex
	waiting map[uint64]chan struct{}
	onReq   func(*paho.Publish) // set on the responder only
}

func dialRaw(ctx context.Context, brokerURL, clientID string) (*rawConn, error) {
	u, err := url.Parse(brokerURL)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "1883")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("bench: raw echo: dial %s: %w", host, err)
	}
	rc := &rawConn{waiting: map[uint64]chan struct{}{}}
	rc.pc = paho.NewClient(paho.ClientConfig{
		ClientID:          clientID,
		Conn:              nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){rc.received},
	})
	if _, err := rc.pc.Connect(ctx, &paho.Connect{ClientID: clientID, CleanStart: true, KeepAlive: 60}); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("bench: raw echo: connect: %w", err)
	}
	return rc, nil
}

func (rc *rawConn) subscribe(ctx context.Context, topic string) error {
	_, err := rc.pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic, QoS: 1}}})
	return err
}

func (rc *rawConn) close() { _ = rc.pc.Disconnect(&paho.Disconnect{}) }

// received runs in paho's delivery goroutine: it must not block.
func (rc *rawConn) received(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	if rc.onReq != nil {
		rc.onReq(p)
		return true, nil
	}
	if p.Properties == nil || len(p.Properties.CorrelationData) != corrBytes {
		return true, nil
	}
	id := binary.BigEndian.Uint64(p.Properties.CorrelationData)
	rc.mu.Lock()
	ch := rc.waiting[id]
	delete(rc.waiting, id)
	rc.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
	return true, nil
}

// request publishes one request and waits for its reply. The waiter is
// registered before publishing: most replies arrive before Publish returns.
func (rc *rawConn) request(ctx context.Context, req *paho.Publish, id uint64, ch chan struct{}, timeout time.Duration) error {
	rc.mu.Lock()
	rc.waiting[id] = ch
	rc.mu.Unlock()
	forget := func() {
		rc.mu.Lock()
		delete(rc.waiting, id)
		rc.mu.Unlock()
	}
	if _, err := rc.pc.Publish(ctx, req); err != nil {
		forget()
		return fmt.Errorf("bench: raw echo: publish: %w", err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	forget()
	select {
	case <-ch: // the reply raced the give-up and is already in the channel
		return nil
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errRawTimeout
}

// startResponder connects a bare paho client that answers every request
// on topic with a reply of the same size and shape, published from a
// goroutine of its own so that the delivery goroutine never waits for a
// PUBACK.
func startResponder(ctx context.Context, brokerURL, clientID, topic string, shape *echoShape) (*rawConn, error) {
	rc, err := dialRaw(ctx, brokerURL, clientID)
	if err != nil {
		return nil, err
	}
	rc.onReq = func(p *paho.Publish) {
		if p.Properties == nil || p.Properties.ResponseTopic == "" {
			return
		}
		reply := shape.pahoReply(p)
		go func() { _, _ = rc.pc.Publish(context.Background(), reply) }()
	}
	if err := rc.subscribe(ctx, topic); err != nil {
		rc.close()
		return nil, fmt.Errorf("bench: raw echo: responder subscribe: %w", err)
	}
	return rc, nil
}

// echoLoad prepares the raw echo against brokerURL as a workload with
// the run's clients × in flight. The request and reply payloads are
// payloadSize bytes. A setup failure is kept in the workload's err.
func echoLoad(ctx context.Context, name, brokerURL, reqTopic, runID string, cfg Config, payloadSize int) *workload {
	shapes := make([]*echoShape, cfg.Clients)
	l := &workload{name: name, workers: cfg.Clients * cfg.InFlight}
	conns := make([]*rawConn, 0, cfg.Clients)
	l.close = func() {
		for _, rc := range conns {
			rc.close()
		}
	}
	respTopics := make([]string, cfg.Clients)
	for i := range cfg.Clients {
		id := fmt.Sprintf("ssgen-bench-%s-raw-%d", runID, i)
		rc, err := dialRaw(ctx, brokerURL, id)
		if err != nil {
			l.err = err
			return l
		}
		conns = append(conns, rc)
		shapes[i] = newEchoShape(cfg.BareBaseline, id)
		respTopics[i] = rawTopicRoot + runID + "/resp/" + id
		if err := rc.subscribe(ctx, respTopics[i]); err != nil {
			l.err = fmt.Errorf("bench: raw echo: subscribe: %w", err)
			return l
		}
	}
	payload := make([]byte, payloadSize)
	var ids atomic.Uint64
	chans := make([]chan struct{}, l.workers)
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
	}
	l.do = func(w int, _ *rand.Rand) (Op, error) {
		c, id := w%cfg.Clients, ids.Add(1)
		req := shapes[c].request(reqTopic, respTopics[c], payload, id)
		err := conns[c].request(ctx, req, id, chans[w], cfg.Timeout)
		if err != nil {
			// A reply may still land in the old channel after the give-up.
			chans[w] = make(chan struct{}, 1)
		}
		return OpGet, err
	}
	return l
}
