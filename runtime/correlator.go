package runtime

import (
	"crypto/rand"
	"sync"

	"github.com/eclipse/paho.golang/paho"
)

// correlationID is the 16 random bytes of a request's Correlation Data.
type correlationID [16]byte

func newCorrelationID() correlationID {
	var id correlationID
	_, _ = rand.Read(id[:]) // never fails on supported platforms
	return id
}

// correlator matches responses to the requests waiting for them. A request
// registers before it publishes, because most responses arrive before the
// publish call returns; a response nobody waits for any more (the caller
// gave up, or the broker redelivered it) is counted and dropped.
type correlator struct {
	mu sync.Mutex
	m  map[correlationID]chan *paho.Publish
}

func (c *correlator) add(id correlationID) chan *paho.Publish {
	ch := make(chan *paho.Publish, 1)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[correlationID]chan *paho.Publish)
	}
	c.m[id] = ch
	c.mu.Unlock()
	return ch
}

func (c *correlator) remove(id correlationID) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// deliver hands p to the waiting request without blocking; it reports
// false when nobody waits for id.
func (c *correlator) deliver(corr []byte, p *paho.Publish) bool {
	if len(corr) != len(correlationID{}) {
		return false
	}
	id := correlationID(corr)
	c.mu.Lock()
	ch, ok := c.m[id]
	delete(c.m, id)
	c.mu.Unlock()
	if ok {
		ch <- p // buffered, and removed from the map above: never blocks
	}
	return ok
}

func (c *correlator) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
