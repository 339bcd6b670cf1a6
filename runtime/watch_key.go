package runtime

import (
	"context"
	"iter"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// KeyEvent is one change of a watched typed key.
type KeyEvent[T any] struct {
	Kind    EventKind // EventSet, EventDelete or EventResync
	Value   T         // the new value (EventSet, and EventResync when Found)
	Version hlc.HLC
	Found   bool // the key exists after this event
}

// Watch reports the key's changes with decoded values, as Client.Watch
// does for bytes: from the moment iteration starts until ctx ends, with an
// EventResync carrying the current value whenever changes may have been
// missed. A value the codec cannot read is yielded as an error (a
// *codec.DecodeError, with the event's kind and version) and the watch goes
// on; errors from Client.Watch are passed through.
func (k *Key[T]) Watch(ctx context.Context) iter.Seq2[KeyEvent[T], error] {
	return k.WatchWith(ctx, WatchOptions{})
}

// WatchWith is Watch with options, those of Client.WatchWith. With
// opts.Current the first event is an EventResync carrying the key's
// decoded value (Found false when it is absent), read once the KEYNOTIFY
// registration is live, so the watcher starts from a known value and
// misses no change after it. The events are the same as Watch's.
func (k *Key[T]) WatchWith(ctx context.Context, opts WatchOptions) iter.Seq2[KeyEvent[T], error] {
	return func(yield func(KeyEvent[T], error) bool) {
		for ev, err := range k.c.WatchWith(ctx, k.name, opts) {
			if err != nil {
				if !yield(KeyEvent[T]{}, err) {
					return
				}
				continue
			}
			ke := KeyEvent[T]{Kind: ev.Kind, Version: ev.Version, Found: ev.Found}
			if ev.Found && ev.Kind != EventDelete {
				ke.Value, err = k.codec.Decode(ev.Value)
				if err != nil {
					var zero T
					ke.Value = zero
				}
			}
			if !yield(ke, err) {
				return
			}
		}
	}
}
