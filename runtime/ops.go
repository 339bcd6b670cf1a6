package runtime

import (
	"context"
	"strconv"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// Condition is the precondition of a Set.
type Condition int

const (
	// Always sets unconditionally.
	Always Condition = iota
	// IfNotExists (NX) sets only if the key is absent.
	IfNotExists
	// IfNotExistsOrEqual (NEX) sets if the key is absent or already holds
	// exactly the new value; this is how a lock holder renews.
	IfNotExistsOrEqual
)

func (c Condition) String() string {
	switch c {
	case Always:
		return "Always"
	case IfNotExists:
		return protocol.OptNX
	case IfNotExistsOrEqual:
		return protocol.OptNEX
	}
	return "Condition(" + strconv.Itoa(int(c)) + ")"
}

// SetOptions are the options of Set.
type SetOptions struct {
	Condition Condition
	// TTL makes the key expire this long after the Set (PX, whole
	// milliseconds, rounded up); zero makes it persistent.
	TTL time.Duration
	// FencingToken, when non-zero, is sent as __ft: the service rejects the
	// Set if the key is protected by a newer token, and stores it otherwise.
	FencingToken hlc.HLC
	// Persist asks the broker to persist the key (aio-persistence=true).
	Persist bool
}

// DelOptions are the options of Del and VDel.
type DelOptions struct {
	FencingToken hlc.HLC
}

func checkKey(key []byte) error {
	if len(key) == 0 {
		return invalidArg("empty key")
	}
	return nil
}

// Get returns the value of key and its version. A missing key gives
// ErrNotFound. The returned slice is the caller's.
func (c *Client) Get(ctx context.Context, key []byte) ([]byte, hlc.HLC, error) {
	if err := checkKey(key); err != nil {
		return nil, hlc.HLC{}, err
	}
	r, _, err := c.invoke(ctx, protocol.VerbGet, [][]byte{[]byte(protocol.VerbGet), key}, reqOpts{})
	if err != nil {
		return nil, hlc.HLC{}, err
	}
	switch r.val.Kind {
	case resp3.KindBulk:
		return r.val.Str, r.version, nil
	case resp3.KindNull:
		return nil, hlc.HLC{}, ErrNotFound
	}
	return nil, hlc.HLC{}, unexpected(protocol.VerbGet, r.val)
}

// Set stores value under key and returns the version the service gave it.
// A failed NX/NEX condition gives ErrConditionNotMet.
func (c *Client) Set(ctx context.Context, key, value []byte, opts SetOptions) (hlc.HLC, error) {
	if err := checkKey(key); err != nil {
		return hlc.HLC{}, err
	}
	if opts.TTL < 0 {
		return hlc.HLC{}, invalidArg("negative TTL %s", opts.TTL)
	}
	// Filled by index, not append: nothing here escapes, so a Set
	// allocates no argument list.
	var argBuf [6][]byte
	argBuf[0], argBuf[1], argBuf[2] = []byte(protocol.VerbSet), key, value
	n := 3
	switch opts.Condition {
	case Always:
	case IfNotExists:
		argBuf[n] = []byte(protocol.OptNX)
		n++
	case IfNotExistsOrEqual:
		argBuf[n] = []byte(protocol.OptNEX)
		n++
	default:
		return hlc.HLC{}, invalidArg("unknown condition %d", int(opts.Condition))
	}
	var num [20]byte
	if opts.TTL > 0 {
		ms := (opts.TTL + time.Millisecond - 1) / time.Millisecond
		argBuf[n], argBuf[n+1] = []byte(protocol.OptPX), strconv.AppendInt(num[:0], int64(ms), 10)
		n += 2
	}
	args := argBuf[:n]
	r, _, err := c.invoke(ctx, protocol.VerbSet, args, reqOpts{fencing: opts.FencingToken, persist: opts.Persist})
	if err != nil {
		return hlc.HLC{}, err
	}
	switch {
	case r.val.Kind == resp3.KindSimple && string(r.val.Str) == protocol.ReplyOK:
		c.listeners.wrote(key) // a pattern watch picks up its own client's new keys at once
		return r.version, nil
	case r.val.Kind == resp3.KindInteger && r.val.Int == -1:
		return hlc.HLC{}, ErrConditionNotMet
	}
	return hlc.HLC{}, unexpected(protocol.VerbSet, r.val)
}

// Del deletes key. deleted is false when the key was absent.
func (c *Client) Del(ctx context.Context, key []byte, opts DelOptions) (deleted bool, version hlc.HLC, err error) {
	if err := checkKey(key); err != nil {
		return false, hlc.HLC{}, err
	}
	r, _, err := c.invoke(ctx, protocol.VerbDel, [][]byte{[]byte(protocol.VerbDel), key}, reqOpts{fencing: opts.FencingToken})
	if err != nil {
		return false, hlc.HLC{}, err
	}
	if r.val.Kind == resp3.KindInteger && (r.val.Int == 0 || r.val.Int == 1) {
		return r.val.Int == 1, r.version, nil
	}
	return false, hlc.HLC{}, unexpected(protocol.VerbDel, r.val)
}

// VDel deletes key only if it holds exactly value. deleted is false when
// the key was absent; a different value gives ErrConditionNotMet.
func (c *Client) VDel(ctx context.Context, key, value []byte, opts DelOptions) (deleted bool, version hlc.HLC, err error) {
	if err := checkKey(key); err != nil {
		return false, hlc.HLC{}, err
	}
	r, _, err := c.invoke(ctx, protocol.VerbVDel, [][]byte{[]byte(protocol.VerbVDel), key, value}, reqOpts{fencing: opts.FencingToken})
	if err != nil {
		return false, hlc.HLC{}, err
	}
	if r.val.Kind == resp3.KindInteger {
		switch r.val.Int {
		case 1, 0:
			return r.val.Int == 1, r.version, nil
		case -1:
			return false, hlc.HLC{}, ErrConditionNotMet
		}
	}
	return false, hlc.HLC{}, unexpected(protocol.VerbVDel, r.val)
}

// KeyNotify registers this client for notifications about key. It is the
// raw command: Watch manages registrations itself (one per key, renewed
// after every reconnect), and mixing the two on one key confuses both.
// While the broker refuses the client's notification subscription it
// fails with ErrNotificationsUnavailable and sends nothing.
func (c *Client) KeyNotify(ctx context.Context, key []byte) error {
	_, err := c.keyNotify(ctx, key, false)
	return err
}

// KeyNotifyStop removes a KeyNotify registration; removing one that does
// not exist is not an error.
func (c *Client) KeyNotifyStop(ctx context.Context, key []byte) error {
	_, err := c.keyNotify(ctx, key, true)
	return err
}

func (c *Client) keyNotify(ctx context.Context, key []byte, stop bool) (*conn, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	argBuf := [3][]byte{[]byte(protocol.VerbKeyNotify), key, []byte(protocol.OptStop)}
	args, op := argBuf[:2], protocol.VerbKeyNotify
	if stop {
		args, op = argBuf[:3], protocol.VerbKeyNotify+" "+protocol.OptStop
	}
	if !stop {
		// A registration whose notifications cannot reach this client
		// would only have the service publish into the void.
		if err := c.NotificationsErr(); err != nil {
			return nil, err
		}
	}
	r, cn, err := c.invoke(ctx, op, args, reqOpts{notify: !stop})
	if err != nil {
		return cn, err
	}
	switch {
	case r.val.Kind == resp3.KindSimple && string(r.val.Str) == protocol.ReplyOK:
		return cn, nil
	case stop && r.val.Kind == resp3.KindInteger && r.val.Int == 0:
		return cn, nil
	}
	return cn, unexpected(op, r.val)
}
