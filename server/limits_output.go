package server

import (
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/server/engine"
)

// outputs counts, per client connection, the bytes of the QoS 1 messages
// the broker holds for it: every PUBLISH in the client's in-flight table,
// which is where mochi keeps a QoS 1 delivery from the moment it is queued
// until the client acknowledges it (or the session ends). The client's
// Receive Maximum bounds that table in count only (65535 for the official
// SDKs), so without this a client that reads its answers but never
// acknowledges them, or stops reading altogether, makes the broker hold
// gigabytes of 256 KiB answers.
//
// It mirrors the in-flight table by packet id, fed by mochi's QoS hooks
// (and by embedded.inject, which writes into a session directly): a
// message is added when it enters the table and removed when it leaves,
// and a packet id reused replaces the old entry as in mochi's table.
//
// Notifications wait in a per-watcher queue (Server's serializer) before
// they reach the in-flight table, one at a time, and the hand-over blocks
// while the watcher's socket is full: a watcher that stops reading piles
// them up there. They are counted from the moment they are queued, by
// client id (the queue knows no connection), and count towards the limit
// of the client holding that id.
type outputs struct {
	limit  int64
	mu     sync.Mutex
	by     map[*mqtt.Client]*clientOutput
	queued map[string]*queuedOutput
}

type queuedOutput struct {
	bytes int64
	n     int
}

type clientOutput struct {
	sizes  map[uint16]int64
	total  int64
	kicked bool // over the limit once: being disconnected
}

func newOutputs(limit int64) *outputs {
	return &outputs{limit: limit, by: map[*mqtt.Client]*clientOutput{}, queued: map[string]*queuedOutput{}}
}

// messageCost approximates what a PUBLISH held in a client's in-flight
// table costs: its variable parts plus the packet structure.
func messageCost(pk *packets.Packet) int64 {
	n := len(pk.Payload) + len(pk.TopicName) + len(pk.Properties.CorrelationData) +
		len(pk.Properties.ResponseTopic) + len(pk.Properties.ContentType)
	for _, u := range pk.Properties.User {
		n += len(u.Key) + len(u.Val) + 32
	}
	return int64(n) + 512
}

// add records a message entering cl's in-flight table. It reports true,
// once per connection, when cl goes over the limit: more than limit bytes
// held in more than one message (one message of any size always passes,
// so a client with nothing pending can always read the largest value).
func (o *outputs) add(cl *mqtt.Client, id uint16, size int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.by[cl]
	if c == nil {
		c = &clientOutput{sizes: map[uint16]int64{}}
		o.by[cl] = c
	}
	c.total += size - c.sizes[id]
	c.sizes[id] = size
	return o.over(cl, c)
}

// over marks c kicked and reports true the first time cl's messages, held
// and queued, go over the limit in more than one message. Called with
// o.mu held.
func (o *outputs) over(cl *mqtt.Client, c *clientOutput) bool {
	total, n := c.total, len(c.sizes)
	if q := o.queued[cl.ID]; q != nil {
		total, n = total+q.bytes, n+q.n
	}
	if c.kicked || o.limit <= 0 || total <= o.limit || n < 2 {
		return false
	}
	c.kicked = true
	return true
}

// enqueue counts a notification queued for client id, held by cl (nil
// when no client holds the id), and reports whether cl is now over.
func (o *outputs) enqueue(cl *mqtt.Client, id string, size int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queued[id]
	if q == nil {
		q = &queuedOutput{}
		o.queued[id] = q
	}
	q.bytes += size
	q.n++
	if cl == nil {
		return false
	}
	c := o.by[cl]
	if c == nil {
		c = &clientOutput{sizes: map[uint16]int64{}}
		o.by[cl] = c
	}
	return o.over(cl, c)
}

// dequeue uncounts a notification leaving the queue of client id.
func (o *outputs) dequeue(id string, size int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if q := o.queued[id]; q != nil {
		q.bytes -= size
		if q.n--; q.n <= 0 {
			delete(o.queued, id)
		}
	}
}

// remove records a message leaving cl's in-flight table.
func (o *outputs) remove(cl *mqtt.Client, id uint16) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.by[cl]
	if c == nil {
		return
	}
	if size, ok := c.sizes[id]; ok {
		c.total -= size
		delete(c.sizes, id)
	}
	if len(c.sizes) == 0 && !c.kicked {
		delete(o.by, cl)
	}
}

// forget drops cl's record: its connection and session have ended.
func (o *outputs) forget(cl *mqtt.Client) {
	o.mu.Lock()
	delete(o.by, cl)
	o.mu.Unlock()
}

// clear empties cl's record: its session has ended. A client being
// disconnected for its output keeps the mark until forget, so that
// messages still arriving before its connection ends do not start a
// second disconnect.
func (o *outputs) clear(cl *mqtt.Client) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.by[cl]; c != nil && c.kicked {
		c.sizes, c.total = map[uint16]int64{}, 0
		return
	}
	delete(o.by, cl)
}

// resync rebuilds cl's record from its in-flight table, after mochi took a
// message out of it without telling the hooks (a full outbound queue).
func (o *outputs) resync(cl *mqtt.Client) {
	held := cl.State.Inflight.GetAll(false)
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.by[cl]
	if c == nil {
		return
	}
	c.sizes, c.total = map[uint16]int64{}, 0
	for i := range held {
		if held[i].FixedHeader.Type == packets.Publish {
			size := messageCost(&held[i])
			c.sizes[held[i].PacketID] = size
			c.total += size
		}
	}
}

// kicked reports whether cl went over the limit.
func (o *outputs) kicked(cl *mqtt.Client) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.by[cl]
	return c != nil && c.kicked
}

// held is the bytes counted for cl.
func (o *outputs) held(cl *mqtt.Client) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n int64
	if c := o.by[cl]; c != nil {
		n = c.total
	}
	if q := o.queued[cl.ID]; q != nil {
		n += q.bytes
	}
	return n
}

// notificationCost approximates a queued notification: its payload, key
// and the PUBLISH it becomes.
func notificationCost(n *engine.Notification) int64 {
	return int64(len(n.Payload)+len(n.Key)) + 512
}
