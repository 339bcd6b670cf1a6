package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

// Defaults of GetManyOptions.
const (
	// DefaultGetManyConcurrency is how many GETs one GetMany keeps in
	// flight when GetManyOptions.Concurrency is 0.
	DefaultGetManyConcurrency = 32
	// DefaultGetManyRetries is how many times a key's GET is sent again
	// after a transport failure when GetManyOptions.Retries is 0.
	DefaultGetManyRetries = 2
)

// GetManyOptions adjust one GetMany, GetKeys or GetEach call. The zero
// value takes the defaults.
type GetManyOptions struct {
	// Concurrency caps the GETs this call has in flight at once
	// (DefaultGetManyConcurrency when 0). They share the Client's one
	// connection, and with it the broker's Receive Maximum, with every
	// other request of the Client: requests wait for a slot first come,
	// first served, so a large GetMany does not shut out other callers.
	Concurrency int
	// Retries is how many more times a key's GET is sent after a transport
	// failure (IsRetryable: the connection dropped, or the GET timed out)
	// while ctx allows (DefaultGetManyRetries when 0; negative for none). A
	// GET changes nothing, so sending it again is always safe. The
	// service's answers, a key the broker refused (*BrokerError) and a
	// malformed response are not retried.
	Retries int
	// KeyTimeout bounds each attempt of each key's GET (Config.Timeout when
	// 0, and never longer than it). ctx bounds the whole call.
	KeyTimeout time.Duration
}

// GetResult is the outcome of one key of a GetMany.
type GetResult struct {
	Key     []byte  // the key, as given
	Value   []byte  // the value, when found; the caller's to keep
	Version hlc.HLC // the value's version, when found
	// Err is nil when the key was read, ErrNotFound when it does not
	// exist, and otherwise why it could not be read (the error Get would
	// have returned).
	Err error
}

// GetManyError is the error of a GetMany, GetKeys or GetEach call in which
// some keys could not be read (a key that does not exist is not a
// failure). The results still hold every key's outcome. It unwraps to the
// first failure in input order, so errors.Is(err, ErrTimeout) and the like
// ask about that one.
type GetManyError struct {
	Failed int   // keys whose Err is neither nil nor ErrNotFound
	Total  int   // keys asked for
	First  error // the first of those errors in input order
}

func (e *GetManyError) Error() string {
	return fmt.Sprintf("statestore: %d of %d keys could not be read; first: %v", e.Failed, e.Total, e.First)
}

// Unwrap returns the first failure.
func (e *GetManyError) Unwrap() error { return e.First }

// GetMany reads many keys over the Client's one connection, up to
// opts.Concurrency at a time, and returns one result per key in the order
// given. The state store has no multi-key read, so each key is its own GET;
// what GetMany adds is the bounded concurrency and these rules:
//
//   - Duplicates: a key listed more than once is read once, and every
//     position gets that read's result (each its own copy of the value).
//   - Partial failure: one key's failure does not stop the others. Every
//     position gets its outcome in GetResult.Err; the returned error is a
//     *GetManyError when some key failed (ErrNotFound is not a failure),
//     nil otherwise. The results are complete either way.
//   - Concurrency: at most opts.Concurrency GETs of this call in flight,
//     DefaultGetManyConcurrency (32) by default, within the broker's
//     Receive Maximum for the whole Client.
//   - Retries: a GET that failed in transport (the connection dropped, or
//     its own timeout passed) is sent again, up to opts.Retries times
//     (DefaultGetManyRetries, 2, by default), after the Client's reconnect
//     backoff, while ctx allows. Nothing else is retried.
//   - Timeouts: each attempt of each GET is bounded by opts.KeyTimeout
//     (Config.Timeout by default), counted from when it is sent, so a long
//     list does not eat into its keys' timeouts; ctx bounds the whole call.
//     When ctx ends, GETs in flight fail with its error and keys not yet
//     sent get it without being sent (a *TimeoutError for a deadline,
//     context.Canceled for a cancellation).
//   - Consistency: each value is as of its own GET; the results are not a
//     snapshot of one moment.
//
// An empty key gets ErrInvalidArgument in its result and is not sent.
func (c *Client) GetMany(ctx context.Context, keys [][]byte, opts GetManyOptions) ([]GetResult, error) {
	reqs := make([]getReq, len(keys))
	for i, k := range keys {
		reqs[i] = getReq{c: c, key: k}
	}
	raw := getMany(ctx, reqs, opts)
	out := make([]GetResult, len(keys))
	for i, r := range raw {
		out[i] = GetResult{Key: keys[i], Value: r.value, Version: r.version, Err: r.err}
	}
	return out, manyError(len(out), func(i int) error { return out[i].Err })
}

// getReq is one key of a multi-get, on its client (typed keys may come
// from several).
type getReq struct {
	c   *Client
	key []byte
}

type getOutcome struct {
	value   []byte
	version hlc.HLC
	err     error
}

// getMany reads reqs, each distinct (client, key) once, with at most
// opts.Concurrency GETs in flight, and returns the outcomes in order.
func getMany(ctx context.Context, reqs []getReq, opts GetManyOptions) []getOutcome {
	out := make([]getOutcome, len(reqs))
	if len(reqs) == 0 {
		return out
	}
	type ident struct {
		c   *Client
		key string
	}
	// first[i] is the position whose read position i shares.
	first := make([]int, len(reqs))
	seen := make(map[ident]int, len(reqs))
	var todo []int
	for i, r := range reqs {
		id := ident{r.c, string(r.key)}
		if j, ok := seen[id]; ok {
			first[i] = j
			continue
		}
		seen[id] = i
		first[i] = i
		todo = append(todo, i)
	}

	workers := opts.Concurrency
	if workers <= 0 {
		workers = DefaultGetManyConcurrency
	}
	workers = min(workers, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1)) - 1
				if n >= len(todo) {
					return
				}
				i := todo[n]
				out[i] = getOne(ctx, reqs[i], opts)
			}
		}()
	}
	wg.Wait()

	for i, j := range first {
		if i != j {
			o := out[j]
			if o.value != nil {
				o.value = append([]byte(nil), o.value...)
			}
			out[i] = o
		}
	}
	return out
}

// getOne reads one key, retrying transport failures as opts allow.
func getOne(ctx context.Context, r getReq, opts GetManyOptions) getOutcome {
	c := r.c
	if c == nil {
		return getOutcome{err: invalidArg("nil key handle")}
	}
	retries := opts.Retries
	switch {
	case retries == 0:
		retries = DefaultGetManyRetries
	case retries < 0:
		retries = 0
	}
	for attempt := 0; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if opts.KeyTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, opts.KeyTimeout)
		}
		v, ver, err := c.Get(actx, r.key)
		cancel()
		switch {
		case err == nil:
			return getOutcome{value: v, version: ver}
		case errors.Is(err, ErrNotFound) || !IsRetryable(err) || attempt >= retries || ctx.Err() != nil:
			return getOutcome{err: err}
		}
		t := time.NewTimer(c.backoff.delay(attempt + 1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// manyError is the call-level error of n outcomes: nil, or a
// *GetManyError.
func manyError(n int, errAt func(int) error) error {
	e := &GetManyError{Total: n}
	for i := range n {
		if err := errAt(i); err != nil && !errors.Is(err, ErrNotFound) {
			if e.Failed == 0 {
				e.First = err
			}
			e.Failed++
		}
	}
	if e.Failed == 0 {
		return nil
	}
	return e
}
