package runtime

import (
	"context"
	"iter"
)

// GroupEvent is one change of a key or lock of a group instance, from
// WatchGroup: the instance's parameters and handle, the member's schema
// name ("SetPoint", "Owner") and the byte-level Event (Kind, Key, Value,
// Version, Found). Decode a key's value with its handle's codec, e.g.
// ev.Handle.SetPoint().Codec().Decode(ev.Value).
type GroupEvent[P, H any] struct {
	Params P
	Handle H
	Member string
	// Earlier reports an event of the member's earlier key (a key that
	// moved, renamed_from): a write by a program built from the older
	// schema, or the earlier key's deletion when the key is written
	// under its new name (a Delete event that does not mean the member's
	// value is gone).
	Earlier bool
	Event
}

// WatchGroup is WatchPattern over the Template's glob, with each event's
// key read back into the group's parameters and handle as ListGroup does.
// Keys the glob matches but the group does not (their shape, or a
// parameter value parse refuses) are not watched at all (they take no
// registration). Generated code returns it from Watch<Group>s; opts.Filter
// is replaced.
func WatchGroup[P, H any](ctx context.Context, c *Client, t *Template, opts PatternWatchOptions, parse func(params []string) (P, H, error)) iter.Seq2[GroupEvent[P, H], error] {
	return func(yield func(GroupEvent[P, H], error) bool) {
		opts.Filter = func(key []byte) bool {
			vals, _, _, ok := t.match(string(key))
			if ok {
				_, _, err := parse(vals)
				ok = err == nil
			}
			return ok
		}
		for ev, err := range c.WatchPattern(ctx, t.glob, opts) {
			if err != nil {
				if !yield(GroupEvent[P, H]{}, err) {
					return
				}
				continue
			}
			vals, _, m, ok := t.match(string(ev.Key))
			if !ok {
				continue
			}
			p, h, perr := parse(vals)
			if perr != nil {
				continue
			}
			if !yield(GroupEvent[P, H]{Params: p, Handle: h, Member: t.members[m].name, Earlier: t.members[m].earlier, Event: ev}, nil) {
				return
			}
		}
	}
}
