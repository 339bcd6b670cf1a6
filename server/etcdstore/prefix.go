package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrPrefixOverlap is what Open returns (in a *PrefixError) when the
// store's prefix would overlap another store's in the same etcd.
var ErrPrefixOverlap = errors.New("etcdstore: the prefix overlaps another store's")

// PrefixError is a prefix refused because another store's prefix starts
// it (Other is that prefix) or lies under it (Key is a key of that store).
type PrefixError struct {
	Prefix, Other, Key string
}

func (e *PrefixError) Error() string {
	switch {
	case e.Other == "":
		return fmt.Sprintf("etcdstore: prefix %q is refused: it covers the whole etcd keyspace, leaving no prefix for another store", e.Prefix)
	case e.Key == "":
		return fmt.Sprintf("etcdstore: prefix %q lies inside the store at prefix %q: each store's keys would be the other's (choose a prefix neither starts)", e.Prefix, e.Other)
	default:
		return fmt.Sprintf("etcdstore: prefix %q holds %q, a key of another store nested inside it: each store's keys would be the other's (choose a prefix neither starts)", e.Prefix, e.Key)
	}
}

func (e *PrefixError) Is(target error) bool { return target == ErrPrefixOverlap }

// maxShownKey bounds the foreign key a PrefixError names.
const maxShownKey = 200

// prefixScan bounds each range checkPrefix reads.
const prefixScan = 256

// checkPrefix refuses a prefix that another store's overlaps: "/" alone;
// one inside another store (an ancestor prefix holds a clock or election
// keys); or one holding keys outside its own layout, outside its k/ and w/
// subtrees (a store nested inside started first). A nested store under
// k/ or w/ cannot be told from this store's records (docs/ha.md, Limits).
func checkPrefix(ctx context.Context, cli *clientv3.Client, prefix string) error {
	if prefix == "/" {
		return &PrefixError{Prefix: prefix}
	}
	for i := 0; i < len(prefix)-1; i++ {
		if prefix[i] != '/' {
			continue
		}
		anc := prefix[:i+1]
		found, err := holdsStore(ctx, cli, anc)
		if err != nil {
			return err
		}
		if found {
			return &PrefixError{Prefix: prefix, Other: anc}
		}
	}
	// The prefix's own layout, in key order: clock, k/..., leader/ID,
	// w/...; the k/ and w/ subtrees are skipped.
	end := clientv3.GetPrefixRangeEnd(prefix)
	ranges := [][2]string{
		{prefix, prefix + keysDir},
		{clientv3.GetPrefixRangeEnd(prefix + keysDir), prefix + watchesDir},
		{clientv3.GetPrefixRangeEnd(prefix + watchesDir), end},
	}
	for _, r := range ranges {
		resp, err := cli.Get(ctx, r[0], clientv3.WithRange(r[1]), clientv3.WithKeysOnly(), clientv3.WithLimit(prefixScan))
		if err != nil {
			return fmt.Errorf("etcdstore: reading prefix %q: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if k := string(kv.Key); !ownKey(prefix, k) {
				if len(k) > maxShownKey {
					k = k[:maxShownKey] + "..."
				}
				return &PrefixError{Prefix: prefix, Key: k}
			}
		}
	}
	return nil
}

// ownKey reports whether key (outside k/ and w/) is the store's own: its
// clock or one of its election's candidates.
func ownKey(prefix, key string) bool {
	rest := strings.TrimPrefix(key, prefix)
	if rest == clockKey {
		return true
	}
	id, ok := strings.CutPrefix(rest, leaderDir+"/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// holdsStore reports whether a store lives at prefix: its clock or an
// election candidate is there.
func holdsStore(ctx context.Context, cli *clientv3.Client, prefix string) (bool, error) {
	resp, err := cli.Txn(ctx).Then(
		clientv3.OpGet(prefix+clockKey, clientv3.WithCountOnly()),
		clientv3.OpGet(prefix+leaderDir+"/", clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return false, fmt.Errorf("etcdstore: reading prefix %q: %w", prefix, err)
	}
	for _, r := range resp.Responses {
		if r.GetResponseRange().Count > 0 {
			return true, nil
		}
	}
	return false, nil
}
