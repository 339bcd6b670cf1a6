package engine

// limits are the per-request and per-client bounds of Config (0 =
// unlimited). They sit beside the store-wide quotas and answer the same
// error, the only one of the contract that means "too much".
type limits struct {
	key, value, watches int
	// keptKey bounds the key of a kept write (Config.MaxKeptKeyBytes).
	keptKey int
	// watchBytes bounds the key bytes of one client's registrations;
	// allWatches and allWatchBytes bound the registrations of all clients
	// together, which is what bounds a transport whose client ids are
	// not verified (every request may name a new one).
	watchBytes    int64
	allWatches    int
	allWatchBytes int64
}

// keyArg validates a key argument: not empty, then not longer than the
// key limit.
func (l limits) keyArg(b []byte) Error {
	if err := keyLengthArg(b); err != "" {
		return err
	}
	if l.key > 0 && len(b) > l.key {
		return ErrQuotaExceeded
	}
	return ""
}

// keptKeyFits reports whether a write of a key of n bytes that is to be kept
// (want: Engine.wantDurable) fits the journal's store.
func (l limits) keptKeyFits(n int, want bool) bool {
	return !want || l.keptKey <= 0 || n <= l.keptKey
}

// mayWatch reports whether client may register key: a registration it
// already holds is always renewable, a new one needs room under the limit.
func (l limits) mayWatch(w *watchers, client, key string) bool {
	keys := w.byClient[client]
	if _, ok := keys[key]; ok {
		return true
	}
	n := int64(len(key))
	switch {
	case l.watches > 0 && len(keys) >= l.watches,
		l.watchBytes > 0 && w.clientBytes[client]+n > l.watchBytes,
		l.allWatches > 0 && w.total >= l.allWatches,
		l.allWatchBytes > 0 && w.totalBytes+n > l.allWatchBytes:
		return false
	}
	return true
}
