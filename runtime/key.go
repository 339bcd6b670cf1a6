package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// Key is a typed handle on one state store key: generated accessors return
// one per key, and every method encodes and decodes with the key's codec.
// Making a Key sends nothing. A Key is safe for concurrent use.
//
// A key may have a default TTL (applied on every write unless a SetOpt says
// otherwise) and a guard Lock. Writes to a guarded key carry the fencing
// token of the guard's lease whenever this Client holds that lease, and
// CompareAndSet and Update take the lease themselves.
type Key[T any] struct {
	c       *Client
	name    []byte
	codec   codec.Codec[T]
	ttl     time.Duration
	guard   *Lock
	persist bool
	old     [][]byte // the key's earlier names (MovedFrom), in order; nil when none
	// transitions checks read-modify-writes against the schema's
	// transition rules (Transitions); nil when the type has none.
	transitions TransitionCheck[T]
}

// Entry is a decoded value with the version the service gave it.
type Entry[T any] struct {
	Value   T
	Version hlc.HLC
}

// KeyOption configures a Key when it is made.
type KeyOption func(*keyConfig)

type keyConfig struct {
	ttl     time.Duration
	guard   *Lock
	persist bool
	old     [][]byte
	// transitions is a TransitionCheck of some type; NewKey keeps it
	// when it is of the key's.
	transitions any
}

// DefaultTTL makes every write of the key expire d after it, unless the
// write says WithTTL or WithoutTTL.
func DefaultTTL(d time.Duration) KeyOption { return func(c *keyConfig) { c.ttl = d } }

// GuardedBy names the lock whose lease fences writes to the key and makes
// CompareAndSet and Update available.
func GuardedBy(l *Lock) KeyOption { return func(c *keyConfig) { c.guard = l } }

// PersistWrites asks the broker to persist every write of the key
// (aio-persistence=true).
func PersistWrites() KeyOption { return func(c *keyConfig) { c.persist = true } }

// MovedFrom names the key's earlier names, for a key that moved (a
// schema's renamed_from on a key or its group; several when it moved more
// than once). While the key is absent, reads fall back to the earlier
// keys, in the order given (Get, GetEach, and the reads of CompareAndSet,
// Update and SetIfVersion); every write stores under the current name and
// then deletes every earlier key, fenced like the write (when a deletion
// fails, the write's result comes with its error, which says the value is
// written); SetIfAbsent and the zero version of SetIfVersion count a value
// under an earlier name as present; Delete and DeleteIfEqual remove them
// all. Watch watches the current key only. The fallback is not atomic: a program built from the older
// schema that keeps writing the earlier key while this one writes the
// current key makes two values; deploy the readers of the new name first.
func MovedFrom(names ...[]byte) KeyOption {
	return func(c *keyConfig) {
		for _, n := range names {
			c.old = append(c.old, append([]byte(nil), n...))
		}
	}
}

// NewKey returns a handle on the key stored under name, whose values codec
// encodes. Generated code calls it.
func NewKey[T any](c *Client, name []byte, cdc codec.Codec[T], opts ...KeyOption) *Key[T] {
	var kc keyConfig
	for _, o := range opts {
		o(&kc)
	}
	check, _ := kc.transitions.(TransitionCheck[T])
	return &Key[T]{
		c: c, name: append([]byte(nil), name...), codec: cdc,
		ttl: kc.ttl, guard: kc.guard, persist: kc.persist, old: kc.old,
		transitions: check,
	}
}

// MovedFrom returns the key's first earlier name (MovedFrom), or "" when
// none.
func (k *Key[T]) MovedFrom() string {
	if len(k.old) == 0 {
		return ""
	}
	return string(k.old[0])
}

// EarlierNames returns all the key's earlier names (MovedFrom), in the
// order reads fall back to them.
func (k *Key[T]) EarlierNames() []string {
	out := make([]string, len(k.old))
	for i, n := range k.old {
		out[i] = string(n)
	}
	return out
}

// Name returns the key.
func (k *Key[T]) Name() string { return string(k.name) }

// Codec returns the key's codec.
func (k *Key[T]) Codec() codec.Codec[T] { return k.codec }

// DefaultTTL returns the TTL every write gets unless told otherwise (0 for
// none).
func (k *Key[T]) DefaultTTL() time.Duration { return k.ttl }

// Guard returns the key's guard lock, or nil.
func (k *Key[T]) Guard() *Lock { return k.guard }

// Get reads and decodes the value. A missing key gives ErrNotFound; a value
// the codec cannot read gives a *codec.DecodeError (with the version in
// the Entry).
func (k *Key[T]) Get(ctx context.Context) (Entry[T], error) {
	raw, ver, err := k.getRaw(ctx)
	if err != nil {
		return Entry[T]{}, err
	}
	v, err := k.codec.Decode(raw)
	return Entry[T]{Value: v, Version: ver}, err
}

// getRaw reads the key's stored bytes, or those under its earlier name
// while it is absent.
func (k *Key[T]) getRaw(ctx context.Context) ([]byte, hlc.HLC, error) {
	raw, ver, err := k.c.Get(ctx, k.name)
	if len(k.old) > 0 && errors.Is(err, ErrNotFound) {
		return k.getOld(ctx)
	}
	return raw, ver, err
}

// getOld reads the first of the key's earlier names that holds a value.
func (k *Key[T]) getOld(ctx context.Context) ([]byte, hlc.HLC, error) {
	for _, old := range k.old {
		raw, ver, err := k.c.Get(ctx, old)
		if !errors.Is(err, ErrNotFound) {
			return raw, ver, err
		}
	}
	return nil, hlc.HLC{}, ErrNotFound
}

// dropOld deletes the key's earlier name after a write, fenced like the
// write.
func (k *Key[T]) dropOld(ctx context.Context, wc writeConfig) error {
	for _, old := range k.old {
		_, err := fenced(ctx, k, wc, func(ctx context.Context, tok hlc.HLC) (bool, error) {
			ok, _, err := k.c.Del(ctx, old, DelOptions{FencingToken: tok})
			return ok, err
		})
		if err != nil {
			return fmt.Errorf("statestore: key %q is written, but its earlier name %q is not deleted: %w", k.name, old, err)
		}
	}
	return nil
}

// oldPresent reports whether the key's earlier name holds a value.
func (k *Key[T]) oldPresent(ctx context.Context) (bool, error) {
	if len(k.old) == 0 {
		return false, nil
	}
	_, _, err := k.getOld(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// SetOpt adjusts one write: Set, SetIfAbsent, Delete or DeleteIfEqual (the
// TTL options apply to the two Sets only).
type SetOpt func(*writeConfig)

type writeConfig struct {
	ttl     time.Duration
	ttlSet  bool
	token   hlc.HLC
	lease   *Lease
	persist bool
}

// WithTTL makes this write expire d after it, instead of the key's default.
func WithTTL(d time.Duration) SetOpt {
	return func(c *writeConfig) { c.ttl, c.ttlSet = d, true }
}

// WithoutTTL makes this write persistent, whatever the key's default TTL.
func WithoutTTL() SetOpt { return WithTTL(0) }

// WithFencingToken sends tok as the write's fencing token (__ft). It wins
// over the guard lease's token.
func WithFencingToken(tok hlc.HLC) SetOpt { return func(c *writeConfig) { c.token = tok } }

// WithLease fences the write with the lease's current token; a lost or
// released lease fails the write before it is sent.
func WithLease(le *Lease) SetOpt { return func(c *writeConfig) { c.lease = le } }

// WithPersist asks the broker to persist this write (aio-persistence=true).
func WithPersist() SetOpt { return func(c *writeConfig) { c.persist = true } }

func (k *Key[T]) writeConfig(opts []SetOpt) writeConfig {
	wc := writeConfig{ttl: k.ttl, persist: k.persist}
	for _, o := range opts {
		o(&wc)
	}
	return wc
}

// fence decides which token a write carries and, when it comes from a
// lease, returns that lease and its local deadline. The lease is either
// named by WithLease or is the guard lease this Client holds.
func (k *Key[T]) fence(wc writeConfig) (hlc.HLC, *Lease, time.Time, error) {
	if !wc.token.IsZero() {
		return wc.token, nil, time.Time{}, nil
	}
	le := wc.lease
	if le == nil && k.guard != nil {
		le = heldLease(k.guard)
	}
	if le == nil {
		return hlc.HLC{}, nil, time.Time{}, nil
	}
	tok, deadline, err := le.valid()
	return tok, le, deadline, err
}

// fenced runs one write with the token fence chose, and turns what the
// write says about the lease into the lease's state: a write cut short by
// the lease's deadline may mean the lease expired, and a token the service
// calls stale means someone newer holds the lock.
func fenced[R any](ctx context.Context, k fenceSource, wc writeConfig, send func(context.Context, hlc.HLC) (R, error)) (R, error) {
	var zero R
	tok, le, deadline, err := k.fence(wc)
	if err != nil {
		return zero, err
	}
	if le == nil {
		r, err := send(ctx, tok)
		if g := k.guardLock(); g != nil && tok.IsZero() && errors.Is(err, ErrFencingTokenRequired) {
			err = fmt.Errorf("%w (the key is guarded by lock %q: hold its lease, or use Update, SetIfVersion or CompareAndSet)", err, g.name)
		}
		return r, err
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	r, err := send(wctx, tok)
	switch {
	case err == nil:
	case errors.Is(err, ErrFencingTokenLowerVersion):
		le.markLost(ErrFencingTokenLowerVersion)
	case wctx.Err() != nil && ctx.Err() == nil:
		// Cut short at the deadline read before sending; a renewal may
		// have moved it since, and valid judges by the current one.
		if _, _, verr := le.valid(); verr != nil {
			return zero, verr
		}
	}
	return r, err
}

// fenceSource is the part of a Key that fenced needs, so that fenced need
// not be generic in T.
type fenceSource interface {
	fence(writeConfig) (hlc.HLC, *Lease, time.Time, error)
	guardLock() *Lock
}

func (k *Key[T]) guardLock() *Lock { return k.guard }

func (k *Key[T]) setRaw(ctx context.Context, value []byte, cond Condition, wc writeConfig) (hlc.HLC, error) {
	if wc.ttl < 0 {
		return hlc.HLC{}, invalidArg("key %q: negative TTL %s", k.name, wc.ttl)
	}
	return fenced(ctx, k, wc, func(ctx context.Context, tok hlc.HLC) (hlc.HLC, error) {
		return k.c.Set(ctx, k.name, value, SetOptions{Condition: cond, TTL: wc.ttl, FencingToken: tok, Persist: wc.persist})
	})
}

// Set encodes v and stores it, and returns the new version. The key's
// default TTL applies unless an option overrides it. A key that moved
// (MovedFrom) then deletes its earlier name; when that fails, Set returns
// the new version with the error.
func (k *Key[T]) Set(ctx context.Context, v T, opts ...SetOpt) (hlc.HLC, error) {
	b, err := k.codec.Encode(v)
	if err != nil {
		return hlc.HLC{}, err
	}
	wc := k.writeConfig(opts)
	ver, err := k.setRaw(ctx, b, Always, wc)
	if err != nil {
		return ver, err
	}
	return ver, k.dropOld(ctx, wc)
}

// SetIfAbsent stores v only if the key does not exist (SET NX). ok is false,
// with a nil error, when the key was already there.
func (k *Key[T]) SetIfAbsent(ctx context.Context, v T, opts ...SetOpt) (ok bool, version hlc.HLC, err error) {
	b, err := k.codec.Encode(v)
	if err != nil {
		return false, hlc.HLC{}, err
	}
	if present, err := k.oldPresent(ctx); present || err != nil {
		return false, hlc.HLC{}, err
	}
	version, err = k.setRaw(ctx, b, IfNotExists, k.writeConfig(opts))
	if errors.Is(err, ErrConditionNotMet) {
		return false, hlc.HLC{}, nil
	}
	return err == nil, version, err
}

// Delete removes the key; deleted is false when it did not exist. A key
// that moved (MovedFrom) is removed under both names.
func (k *Key[T]) Delete(ctx context.Context, opts ...SetOpt) (deleted bool, err error) {
	wc := k.writeConfig(opts)
	for _, name := range k.names() {
		ok, err := fenced(ctx, k, wc, func(ctx context.Context, tok hlc.HLC) (bool, error) {
			ok, _, err := k.c.Del(ctx, name, DelOptions{FencingToken: tok})
			return ok, err
		})
		if err != nil {
			return deleted, err
		}
		deleted = deleted || ok
	}
	return deleted, nil
}

// names are the key's name and its earlier ones, if any.
func (k *Key[T]) names() [][]byte {
	return append([][]byte{k.name}, k.old...)
}

// DeleteIfEqual removes the key only if it holds exactly the encoding of v
// (VDEL; the codec's determinism makes that a value comparison). deleted is
// false, with a nil error, when the key is absent or holds something else.
func (k *Key[T]) DeleteIfEqual(ctx context.Context, v T, opts ...SetOpt) (deleted bool, err error) {
	b, err := k.codec.Encode(v)
	if err != nil {
		return false, err
	}
	wc := k.writeConfig(opts)
	for _, name := range k.names() {
		ok, err := fenced(ctx, k, wc, func(ctx context.Context, tok hlc.HLC) (bool, error) {
			ok, _, err := k.c.VDel(ctx, name, b, DelOptions{FencingToken: tok})
			return ok, err
		})
		if err != nil && !errors.Is(err, ErrConditionNotMet) {
			return deleted, err
		}
		deleted = deleted || ok && err == nil
	}
	return deleted, nil
}
