package engine

// limits are the per-request and per-client bounds of Config (0 =
// unlimited). They sit beside the store-wide quotas and answer the same
// error, the only one of the contract that means "too much".
type limits struct {
	key, value, watches int
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

// mayWatch reports whether client may register key: a registration it
// already holds is always renewable, a new one needs room under the limit.
func (l limits) mayWatch(w *watchers, client, key string) bool {
	if l.watches <= 0 {
		return true
	}
	keys := w.byClient[client]
	if _, ok := keys[key]; ok {
		return true
	}
	return len(keys) < l.watches
}
