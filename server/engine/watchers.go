package engine

// watchers holds the KEYNOTIFY registrations, indexed both ways so that a
// change finds its watchers and a disconnect finds its keys without a scan.
// It counts what they hold, per client and in all, for the watch quotas
// (limits.mayWatch): each registration keeps its own copy of the key.
type watchers struct {
	byKey       map[string][]string            // key -> clients, in registration order
	byClient    map[string]map[string]struct{} // client -> keys
	clientBytes map[string]int64               // client -> sum of its keys' lengths
	total       int                            // registrations of all clients
	totalBytes  int64                          // sum of clientBytes
}

func newWatchers() watchers {
	return watchers{
		byKey:       map[string][]string{},
		byClient:    map[string]map[string]struct{}{},
		clientBytes: map[string]int64{},
	}
}

// add registers client for key; registering twice is the same as once.
func (w *watchers) add(client, key string) {
	keys := w.byClient[client]
	if _, ok := keys[key]; ok {
		return
	}
	if keys == nil {
		keys = map[string]struct{}{}
		w.byClient[client] = keys
	}
	keys[key] = struct{}{}
	w.byKey[key] = append(w.byKey[key], client)
	w.clientBytes[client] += int64(len(key))
	w.total++
	w.totalBytes += int64(len(key))
}

// remove drops client's registration for key and reports whether there was
// one.
func (w *watchers) remove(client, key string) bool {
	keys := w.byClient[client]
	if _, ok := keys[key]; !ok {
		return false
	}
	delete(keys, key)
	w.forget(client, len(key))
	if len(keys) == 0 {
		delete(w.byClient, client)
		delete(w.clientBytes, client)
	}
	w.unlink(client, key)
	return true
}

func (w *watchers) dropClient(client string) {
	for key := range w.byClient[client] {
		w.forget(client, len(key))
		w.unlink(client, key)
	}
	delete(w.byClient, client)
	delete(w.clientBytes, client)
}

// forget takes one registration of n key bytes of client off the counts.
func (w *watchers) forget(client string, n int) {
	w.clientBytes[client] -= int64(n)
	w.total--
	w.totalBytes -= int64(n)
}

// unlink removes client from key's list, keeping the others' order.
func (w *watchers) unlink(client, key string) {
	cs := w.byKey[key]
	for i, c := range cs {
		if c == client {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(w.byKey, key)
		return
	}
	w.byKey[key] = cs
}
