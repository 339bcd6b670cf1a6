package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ClientInfo is one client of the embedded broker, as Server.Clients
// lists it.
type ClientInfo struct {
	ID string
	// Username is the user name of its CONNECT, set only when the password
	// file verified it (the name authorization rules match).
	Username string
	Remote   string
	// Connected is false for a session kept for a disconnected client;
	// Disconnected is then when its connection ended.
	Connected    bool
	Disconnected time.Time
	// Subscriptions are its topic filters, sorted.
	Subscriptions []string
	// Watches is the number of its KEYNOTIFY registrations.
	Watches int
}

// maxListedClients bounds Clients: a console page never holds more.
const maxListedClients = 1000

// Clients lists the embedded broker's clients, connected or with a kept
// session, sorted by id: at most max of them (1000 when max is 0 or more
// than that), and how many there are in all. External mode lists none:
// the other broker owns the connections.
func (s *Server) Clients(max int) ([]ClientInfo, int) {
	e, ok := s.tr.(*embedded)
	if !ok {
		return nil, 0
	}
	if max <= 0 || max > maxListedClients {
		max = maxListedClients
	}
	all := e.broker.Clients.GetAll()
	ids := make([]string, 0, len(all))
	for id, cl := range all {
		if !cl.Net.Inline {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	total := len(ids)
	if len(ids) > max {
		ids = ids[:max]
	}
	out := make([]ClientInfo, 0, len(ids))
	for _, id := range ids {
		cl := all[id]
		ci := ClientInfo{ID: id, Remote: cl.Net.Remote, Connected: !cl.Closed()}
		if s.opts.Security.Passwords != nil {
			ci.Username = string(cl.Properties.Username)
		}
		if t := cl.StopTime(); t > 0 && !ci.Connected {
			ci.Disconnected = time.Unix(t, 0)
		}
		for f := range cl.State.Subscriptions.GetAll() {
			ci.Subscriptions = append(ci.Subscriptions, f)
		}
		slices.Sort(ci.Subscriptions)
		ci.Watches, _ = s.eng.Watching(id, -1)
		out = append(out, ci)
	}
	return out, total
}

// NotifyKey returns the key of a notification topic filter of client's
// (NotifyTopic(client, key)), and false for any other filter, wildcards
// included.
func NotifyKey(client, filter string) ([]byte, bool) {
	prefix := NotifyTopic(client, nil)
	if !strings.HasPrefix(filter, prefix) {
		return nil, false
	}
	return decodeUpperHex(filter[len(prefix):])
}

func decodeUpperHex(s string) ([]byte, bool) {
	if len(s) == 0 || len(s)%2 != 0 {
		return nil, false
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := hexVal(s[2*i])
		lo, ok2 := hexVal(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ErrNotReady is what Ready returns while the server cannot serve.
var ErrNotReady = errors.New("server: not ready")

// Ready returns nil while the server serves: started, not closed, in
// external mode connected to its broker, and with a data dir still
// accepting kept writes (server/persist/watch.go). Otherwise it returns an error
// wrapping ErrNotReady that says why (a readiness probe's answer).
func (s *Server) Ready() error {
	s.mu.Lock()
	started, closed := s.started, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("%w: closed", ErrNotReady)
	case !started:
		return fmt.Errorf("%w: not started", ErrNotReady)
	}
	if x, ok := s.tr.(*external); ok && x.cur.Load() == nil {
		return fmt.Errorf("%w: not connected to the broker %s (reconnecting)", ErrNotReady, x.hostport)
	}
	if s.disk != nil && s.disk.Lost() {
		// Not the path: a readiness probe may answer anyone.
		return fmt.Errorf("%w: kept writes are refused: the data file was replaced, deleted or changed by another writer (the log says which); restart the server", ErrNotReady)
	}
	return nil
}

// External reports whether the server is attached to another broker
// (Options.Broker) rather than embedding one.
func (s *Server) External() bool { return s.opts.Broker != "" }
