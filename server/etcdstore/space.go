package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// spaceRecovery is where a node stands with etcd's NOSPACE alarm: once
// etcd's database passed its quota, etcd refuses every write (the
// leader's transactions, the election's lease and campaign) until the
// alarm is disarmed, so no node could lead, and none compact, for ever.
// Its backoff starts over after a term that lasted longer than
// maxSpaceBackoff or ended for another reason.
type spaceRecovery struct {
	alarmed bool      // NOSPACE seen since the last recovery (logged once)
	next    time.Time // no recovery before
	backoff time.Duration
}

func (s *spaceRecovery) reset() { *s = spaceRecovery{} }

// spaceSteps is what an operator does when the recovery does not suffice.
const spaceSteps = "etcdctl compact <revision>; etcdctl defrag --cluster; etcdctl alarm disarm; " +
	"if it recurs, the store and the history kept (2 × CompactBytes, 16 MiB by default) exceed etcd's --quota-backend-bytes: raise it (docs/ha.md, Limits)"

// noSpace handles a term ended by NOSPACE: one error log when it begins,
// then, no more often than a backoff doubling up to maxSpaceBackoff,
// recoverSpace (compact at the current revision, defragment every
// member, disarm the alarm). The alarm is disarmed automatically because
// the defragmentation has just brought the database file down to what it
// holds: if that still exceeds the quota, etcd raises the alarm again at
// the next write and the next recovery comes after a longer pause.
func (n *Node) noSpace(ctx context.Context, s *spaceRecovery, err error) {
	if !s.alarmed {
		n.log.Error("etcd database space exceeded (NOSPACE alarm): etcd refuses every write; recovering by compacting, defragmenting and disarming",
			"err", err, "manual recovery", spaceSteps)
		s.alarmed = true
		s.backoff = minBackoff
	} else {
		n.log.Debug("state store stepped down", "err", err)
	}
	if time.Now().Before(s.next) {
		return
	}
	rev, size, rerr := n.recoverSpace(ctx)
	s.next = time.Now().Add(s.backoff)
	s.backoff = min(2*s.backoff, maxSpaceBackoff)
	if rerr != nil {
		n.log.Debug("etcd space recovery failed; retrying", "err", rerr, "retry in", s.backoff)
		return
	}
	// Recovered: a later NOSPACE is a new episode, logged again, though
	// its recovery keeps the longer pause (a store that does not fit the
	// quota is not compacted and defragmented every 2 s).
	s.alarmed = false
	n.log.Info("etcd space recovered: history compacted, members defragmented, NOSPACE alarm disarmed",
		"revision", rev, "db size", size)
}

// recoverSpace compacts etcd's history at its current revision (a
// standby then reloads), defragments every endpoint and disarms every
// NOSPACE alarm. It returns the revision and the largest database size
// after defragmentation.
func (n *Node) recoverSpace(ctx context.Context) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, spaceBound)
	defer cancel()
	resp, err := n.cli.Get(ctx, n.cfg.Prefix+clockKey)
	if err != nil {
		return 0, 0, fmt.Errorf("revision: %w", err)
	}
	rev := resp.Header.Revision
	// Physical: the compaction is applied before the defragmentation
	// gives the space back.
	if _, err := n.cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return rev, 0, fmt.Errorf("compact at %d: %w", rev, err)
	}
	var size int64
	for _, ep := range n.cfg.Endpoints {
		if _, err := n.cli.Defragment(ctx, ep); err != nil {
			return rev, 0, fmt.Errorf("defragment %s: %w", ep, err)
		}
		if st, err := n.cli.Status(ctx, ep); err == nil {
			size = max(size, st.DbSize)
		}
	}
	alarms, err := n.cli.AlarmList(ctx)
	if err != nil {
		return rev, size, fmt.Errorf("alarm list: %w", err)
	}
	for _, a := range alarms.Alarms {
		if a.Alarm != etcdserverpb.AlarmType_NOSPACE {
			continue
		}
		if _, err := n.cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: a.MemberID, Alarm: a.Alarm}); err != nil {
			return rev, size, fmt.Errorf("alarm disarm: %w", err)
		}
	}
	return rev, size, nil
}
