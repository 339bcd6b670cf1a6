package runtime

import (
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// NewUnconnectedClient returns a Client that never connects, with its
// clock on now: enough to run the response decoder and the notification
// dispatcher on fuzzed packets.
func NewUnconnectedClient(clientID string, now func() time.Time) *Client {
	cfg, err := Config{Host: "unconnected.invalid", ClientID: clientID, Now: now}.withDefaults()
	if err != nil {
		panic(err)
	}
	c := &Client{
		cfg:          cfg,
		log:          cfg.Logger,
		respTopic:    ResponseTopic(cfg.ClientID),
		notifyPrefix: NotifyTopicPrefix(cfg.ClientID),
		ready:        make(chan struct{}),
		closing:      make(chan struct{}),
		loopDone:     make(chan struct{}),
	}
	c.clock = hlc.NewClock(nodeID(cfg.ClientID), hlc.WithNow(now))
	c.watches.init(c)
	return c
}

// DecodeResponse runs the response decoder on p, as a request of op would.
func (c *Client) DecodeResponse(op string, p *paho.Publish) (resp3.Value, hlc.HLC, error) {
	r, err := c.decode(op, p)
	return r.val, r.version, err
}

// JoinWatcher adds a watcher of key with a buffer of size to the registry
// without sending KEYNOTIFY, and returns its event channel.
func (c *Client) JoinWatcher(key string, size int) <-chan Event {
	w := &watcher{key: key, ch: make(chan Event, size), wake: make(chan struct{}, 1)}
	c.watches.mu.Lock()
	ks := c.watches.keys[key]
	if ks == nil {
		ks = &keyState{key: []byte(key), watchers: make(map[*watcher]struct{})}
		c.watches.keys[key] = ks
	}
	ks.watchers[w] = struct{}{}
	c.watches.watchers++
	c.watches.mu.Unlock()
	return w.ch
}

// Receive hands p to the client as paho's callback would and reports
// whether the client claimed it.
func (c *Client) Receive(p *paho.Publish) bool {
	ok, _ := c.onPublish(paho.PublishReceived{Packet: p})
	return ok
}

// ParseScanPage runs the SCAN page parser on a response payload.
func ParseScanPage(payload []byte) ([][]byte, Cursor, error) {
	v, err := resp3.ParseResponse(payload)
	if err != nil {
		return nil, "", err
	}
	return parseScanPage(v)
}
