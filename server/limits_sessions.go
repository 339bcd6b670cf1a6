package server

import (
	"container/list"
	"log/slog"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// sessions keeps the sessions of disconnected clients in the order they
// disconnected, to bound how many are kept and to free what an ended
// session holds.
//
// mochi v2.7.9 ends an expired session by deleting the client from its
// table only: its subscriptions stay in the topic tree and its in-flight
// messages stay counted. expired frees both. Past Limits.MaxSessions,
// disconnected ends the session disconnected longest (a client still
// reconnecting within its expiry is told by Session Present 0 that its
// session is gone; refusing new clients instead would let abandoned ids
// lock everyone out).
//
// A reconnect with a kept id takes the session off the list
// (established, from OnSessionEstablish, before mochi looks the id up),
// under the same lock as an eviction: a session is either ended before
// the reconnect looks for it, or handed over and never ended.
type sessions struct {
	broker *mqtt.Server
	max    int
	out    *outputs
	stats  *counters
	log    *slog.Logger

	mu    sync.Mutex
	order *list.List               // *mqtt.Client, disconnected longest first
	at    map[string]*list.Element // by client id
}

func newSessions(broker *mqtt.Server, max int, out *outputs, stats *counters, log *slog.Logger) *sessions {
	return &sessions{broker: broker, max: max, out: out, stats: stats, log: log, order: list.New(), at: map[string]*list.Element{}}
}

// established takes id's session off the list: a connection is taking it.
func (s *sessions) established(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.at[id]; ok {
		s.order.Remove(el)
		delete(s.at, id)
	}
}

// disconnected lists cl's session when mochi keeps it, and ends the
// oldest sessions past the limit.
func (s *sessions) disconnected(cl *mqtt.Client, expire bool) {
	if expire {
		s.out.forget(cl) // mochi clears the session itself
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.broker.Clients.Get(cl.ID); cl.IsTakenOver() || !ok || cur != cl {
		return // taken over, or already ended
	}
	if el, ok := s.at[cl.ID]; ok {
		s.order.Remove(el)
	}
	s.at[cl.ID] = s.order.PushBack(cl)
	for s.order.Len() > s.max {
		old := s.order.Remove(s.order.Front()).(*mqtt.Client)
		delete(s.at, old.ID)
		s.free(old)
		s.stats.sessionsEvicted.Add(1)
		s.log.Warn("session ended: too many kept sessions", "client", old.ID, "limit", s.max)
	}
}

// expired frees what mochi's expiry leaves behind of cl's session.
func (s *sessions) expired(cl *mqtt.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlist(cl)
	if cur, ok := s.broker.Clients.Get(cl.ID); !ok || cur != cl || !cl.Closed() {
		return // a new connection has the id: mochi's deletion races it, leave its state alone
	}
	s.free(cl)
	s.stats.sessionsExpired.Add(1)
}

// end ends cl's session now, connected or not: its messages and
// subscriptions are freed and its id forgotten.
func (s *sessions) end(cl *mqtt.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlist(cl)
	s.free(cl)
}

// unlist takes cl's session off the list, if cl is the one listed under
// its id: called with s.mu held.
func (s *sessions) unlist(cl *mqtt.Client) {
	if el, ok := s.at[cl.ID]; ok && el.Value.(*mqtt.Client) == cl {
		s.order.Remove(el)
		delete(s.at, cl.ID)
	}
}

// free releases cl's session: called with s.mu held.
func (s *sessions) free(cl *mqtt.Client) {
	cl.ClearInflights()
	if !cl.IsTakenOver() {
		s.broker.UnsubscribeClient(cl)
	}
	if cur, ok := s.broker.Clients.Get(cl.ID); ok && cur == cl {
		s.broker.Clients.Delete(cl.ID)
	}
	s.out.clear(cl)
}

// kept is how many disconnected sessions are listed.
func (s *sessions) kept() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
