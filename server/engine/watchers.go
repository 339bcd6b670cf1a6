package engine

// watchers holds the KEYNOTIFY registrations, indexed both ways so that a
// change finds its watchers and a disconnect finds its keys without a scan.
type watchers struct {
	byKey    map[string][]string            // key -> clients, in registration order
	byClient map[string]map[string]struct{} // client -> keys
}

func newWatchers() watchers {
	return watchers{byKey: map[string][]string{}, byClient: map[string]map[string]struct{}{}}
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
}

// remove drops client's registration for key and reports whether there was
// one.
func (w *watchers) remove(client, key string) bool {
	keys := w.byClient[client]
	if _, ok := keys[key]; !ok {
		return false
	}
	delete(keys, key)
	if len(keys) == 0 {
		delete(w.byClient, client)
	}
	w.unlink(client, key)
	return true
}

func (w *watchers) dropClient(client string) {
	for key := range w.byClient[client] {
		w.unlink(client, key)
	}
	delete(w.byClient, client)
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
