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

// add registers ch, which must have room for one response, as the
// receiver of id's response.
func (c *correlator) add(id correlationID, ch chan *paho.Publish) {
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[correlationID]chan *paho.Publish)
	}
	c.m[id] = ch
	c.mu.Unlock()
}

// remove unregisters id. Once it returns, nothing is sent on id's channel
// any more, so the channel can be emptied and used again.
func (c *correlator) remove(id correlationID) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

// deliver hands p to the waiting request without blocking; it reports
// false when nobody waits for id. The send happens under the lock (it
// cannot block: the channel has room and only this one send targets it),
// which is what lets remove promise that no send comes after it.
func (c *correlator) deliver(corr []byte, p *paho.Publish) bool {
	if len(corr) != len(correlationID{}) {
		return false
	}
	id := correlationID(corr)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.m[id]
	if ok {
		delete(c.m, id)
		ch <- p
	}
	return ok
}

func (c *correlator) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
