package runtime

import "github.com/eclipse/paho.golang/paho"

// The Client's core (connection, requests, the byte-level operations)
// sits below the features built on it (Watch and the key handles' watches,
// WatchPattern). The core never names a feature: each registers a listener
// when the Client is made, and the core tells the listeners what happened.

// listener is what a feature hears from the core. A nil func is skipped.
type listener struct {
	// connected: cn is live, the first connection or a new one after a
	// loss (the service forgot the old one's registrations).
	connected func(cn *conn)
	// wrote: a SET of key by this client succeeded.
	wrote func(key []byte)
	// notified: a PUBLISH arrived on this client's notification topics.
	// It is called on paho's delivery goroutine and must not block.
	notified func(p *paho.Publish)
}

// listeners are a Client's, in the order registered. They are registered
// before the first connection and never change after, so reading them
// takes no lock.
type listeners []listener

// listen registers l; only while the Client is being made.
func (c *Client) listen(l listener) { c.listeners = append(c.listeners, l) }

func (ls listeners) connected(cn *conn) {
	for _, l := range ls {
		if l.connected != nil {
			l.connected(cn)
		}
	}
}

func (ls listeners) wrote(key []byte) {
	for _, l := range ls {
		if l.wrote != nil {
			l.wrote(key)
		}
	}
}

func (ls listeners) notified(p *paho.Publish) {
	for _, l := range ls {
		if l.notified != nil {
			l.notified(p)
		}
	}
}
