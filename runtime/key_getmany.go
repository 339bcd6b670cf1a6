package runtime

import (
	"context"
	"errors"
)

// KeyResult is the outcome of one key of GetKeys or GetEach.
type KeyResult[T any] struct {
	// Key is the handle that was read; nil when GetEach's key function
	// refused the position's parameters.
	Key *Key[T]
	// Entry holds the decoded value and its version when found, and the
	// version alone when the value could not be decoded.
	Entry[T]
	// Err is nil when the value was read and decoded, ErrNotFound when the
	// key does not exist, a *codec.DecodeError when the stored value does
	// not decode, the key function's error (a *ParamError) for refused
	// parameters, and otherwise why the key could not be read.
	Err error
}

// GetKeys reads many typed keys as Client.GetMany reads byte keys, and
// decodes each value with its key's codec. Results come in the order of
// keys, with the same rules for duplicates, partial failure, concurrency,
// retries and timeouts; a value that does not decode fails its own
// position only (and counts in the *GetManyError). A nil key gets
// ErrInvalidArgument. The keys may belong to several Clients; each is read
// over its own.
func GetKeys[T any](ctx context.Context, keys []*Key[T], opts GetManyOptions) ([]KeyResult[T], error) {
	return getKeys(ctx, keys, nil, opts)
}

// GetEach reads the key that key returns for each element of params, as
// GetKeys does; generated Get<Group><Key>s methods call it with a group's
// parameter values. An error from key (an accessor refusing a parameter)
// becomes that position's Err, and nothing is sent for it.
func GetEach[P, T any](ctx context.Context, params []P, opts GetManyOptions, key func(P) (*Key[T], error)) ([]KeyResult[T], error) {
	keys := make([]*Key[T], len(params))
	var refused []error
	for i, p := range params {
		k, err := key(p)
		if err != nil {
			if refused == nil {
				refused = make([]error, len(params))
			}
			refused[i] = err
			continue
		}
		keys[i] = k
	}
	return getKeys(ctx, keys, refused, opts)
}

// getKeys reads keys; a position with an error in refused is not read.
func getKeys[T any](ctx context.Context, keys []*Key[T], refused []error, opts GetManyOptions) ([]KeyResult[T], error) {
	out := make([]KeyResult[T], len(keys))
	reqs := make([]getReq, 0, len(keys))
	at := make([]int, 0, len(keys)) // at[j]: the position of reqs[j]
	for i, k := range keys {
		switch {
		case refused != nil && refused[i] != nil:
			out[i].Err = refused[i]
		case k == nil:
			out[i].Err = invalidArg("nil key handle")
		default:
			out[i].Key = k
			reqs = append(reqs, getReq{c: k.c, key: k.name})
			at = append(at, i)
		}
	}
	for j, o := range getMany(ctx, reqs, opts) {
		r := &out[at[j]]
		if len(r.Key.old) > 0 && errors.Is(o.err, ErrNotFound) {
			// A key that moved reads its earlier names while it is absent.
			o.value, o.version, o.err = r.Key.getOld(ctx)
		}
		r.Version, r.Err = o.version, o.err
		if o.err == nil {
			r.Value, r.Err = r.Key.codec.Decode(o.value)
		}
	}
	return out, manyError(len(out), func(i int) error { return out[i].Err })
}
