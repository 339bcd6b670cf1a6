package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrMixedClusters is endpoints that belong to different etcd clusters:
// two of them would hold two different stores, each with its own leader.
var ErrMixedClusters = errors.New("etcdstore: the etcd endpoints belong to different clusters")

// statusTimeout bounds the cluster check's question to one endpoint.
const statusTimeout = 2 * time.Second

// checkCluster asks every endpoint for its cluster id and fails with
// ErrMixedClusters, naming each endpoint and its id, when the reachable
// ones do not all report the same; endpoints that do not answer are not
// counted (the client reaches the others).
func checkCluster(ctx context.Context, cli *clientv3.Client, eps []string) error {
	ids := make([]uint64, len(eps))
	ok := make([]bool, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, statusTimeout)
			defer cancel()
			if resp, err := cli.Status(sctx, ep); err == nil && resp.Header != nil {
				ids[i], ok[i] = resp.Header.ClusterId, true
			}
		}()
	}
	wg.Wait()
	var first uint64
	mixed, seen := false, false
	var parts []string
	for i, ep := range eps {
		if !ok[i] {
			parts = append(parts, ep+" (no answer)")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (cluster %x)", ep, ids[i]))
		if seen && ids[i] != first {
			mixed = true
		}
		first, seen = ids[i], true
	}
	if mixed {
		return fmt.Errorf("%w: %s: give the client addresses of one cluster's members", ErrMixedClusters, strings.Join(parts, ", "))
	}
	return nil
}

// dialCauses says why the endpoints could not be reached, when a plain
// connection (and TLS handshake) to each shows it: the etcd client only
// reports that its deadline passed.
func dialCauses(eps []string, tlsCfg *tls.Config, timeout time.Duration) string {
	causes := make([]string, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var conn net.Conn
			var err error
			if tlsCfg != nil {
				c := tlsCfg.Clone()
				if c.ServerName == "" {
					c.ServerName, _, _ = net.SplitHostPort(ep)
				}
				conn, err = (&tls.Dialer{Config: c}).DialContext(ctx, "tcp", ep)
			} else {
				conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", ep)
			}
			if err != nil {
				causes[i] = err.Error()
				return
			}
			_ = conn.Close()
		}()
	}
	wg.Wait()
	var out []string
	for _, c := range causes {
		if c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, "; ")
}
