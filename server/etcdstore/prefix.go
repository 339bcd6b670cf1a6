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
		found, err := holdsStore(ctx, cli, anc, prefix)
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
	k, found, err := firstKey(ctx, cli, prefix, ranges, func(k string) bool { return !ownKey(prefix, k) })
	if err != nil || !found {
		return err
	}
	if len(k) > maxShownKey {
		k = k[:maxShownKey] + "..."
	}
	return &PrefixError{Prefix: prefix, Key: k}
}

// firstKey reads the first prefixScan keys of each range (keys only) and
// returns the first that match accepts; where names the prefix in errors.
func firstKey(ctx context.Context, cli *clientv3.Client, where string, ranges [][2]string, match func(string) bool) (string, bool, error) {
	for _, r := range ranges {
		resp, err := cli.Get(ctx, r[0], clientv3.WithRange(r[1]), clientv3.WithKeysOnly(), clientv3.WithLimit(prefixScan))
		if err != nil {
			return "", false, fmt.Errorf("etcdstore: reading prefix %q: %w", where, err)
		}
		for _, kv := range resp.Kvs {
			if k := string(kv.Key); match(k) {
				return k, true, nil
			}
		}
	}
	return "", false, nil
}

// ownKey reports whether key (outside k/ and w/) is the store's own: its
// clock or one of its election's candidates, leader/ID where ID is the
// candidate's etcd lease in hex (a nested store's clock, leader/clock, is
// not one).
func ownKey(prefix, key string) bool {
	rest := strings.TrimPrefix(key, prefix)
	if rest == clockKey {
		return true
	}
	id, ok := strings.CutPrefix(rest, leaderDir+"/")
	return ok && id != "" && strings.Trim(id, "0123456789abcdef") == ""
}

// holdsStore reports whether a store lives at anc, an ancestor of
// prefix: its clock, or one of its election's candidates (ownKey: an
// anc+"leader/" key whose rest is a lease id in hex). Other keys under
// anc+"leader/" are a nested store's, not anc's election: prefix itself
// may lie there (/plant/leader/), and its own keys are skipped.
func holdsStore(ctx context.Context, cli *clientv3.Client, anc, prefix string) (bool, error) {
	clock, err := cli.Get(ctx, anc+clockKey, clientv3.WithCountOnly())
	if err != nil {
		return false, fmt.Errorf("etcdstore: reading prefix %q: %w", anc, err)
	}
	if clock.Count > 0 {
		return true, nil
	}
	dir := anc + leaderDir + "/"
	ranges := [][2]string{{dir, clientv3.GetPrefixRangeEnd(dir)}}
	if strings.HasPrefix(prefix, dir) {
		ranges = [][2]string{{dir, prefix}, {clientv3.GetPrefixRangeEnd(prefix), clientv3.GetPrefixRangeEnd(dir)}}
	}
	_, found, err := firstKey(ctx, cli, anc, ranges, func(k string) bool { return ownKey(anc, k) })
	return found, err
}
