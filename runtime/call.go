package runtime

import (
	"github.com/eclipse/paho.golang/paho"
)

// call holds the parts of one request that can serve the next one: its
// payload buffer, its response channel and its PUBLISH with properties.
// Calls are pooled per Client. Reusing them is safe because paho has
// written the packet when PublishWithOptions returns and keeps no copy
// (pahostore), and because the correlator sends nothing on the response
// channel after remove. The PUBACK channel is not pooled: a request can
// return before its PUBACK arrives, and the session still holds the
// channel until then.
type call struct {
	id      correlationID
	payload []byte
	resp    chan *paho.Publish
	pub     paho.Publish
	props   paho.PublishProperties
	user    [7]paho.UserProperty // the five of every request, __ft, aio-persistence
	expiry  uint32
	format  byte // the Payload Format Indicator, always 0 (bytes)
}

// maxPooledPayload keeps one huge value from pinning its buffer forever.
const maxPooledPayload = 64 << 10

func (c *Client) getCall() *call {
	if cl, ok := c.calls.Get().(*call); ok {
		return cl
	}
	return &call{payload: make([]byte, 0, 256), resp: make(chan *paho.Publish, 1)}
}

// putCall returns cl to the pool; its request must have been removed from
// the correlator first.
func (c *Client) putCall(cl *call) {
	select {
	case <-cl.resp: // a response that arrived after the caller stopped waiting
	default:
	}
	if cap(cl.payload) > maxPooledPayload {
		return
	}
	cl.payload = cl.payload[:0]
	cl.pub = paho.Publish{}
	cl.props = paho.PublishProperties{}
	cl.user = [7]paho.UserProperty{}
	c.calls.Put(cl)
}
