package etcdstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
)

func TestOwnKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"/p/clock", true},
		{"/p/leader/694d9a4c2b3e1f07", true},
		{"/p/leader/", false},
		{"/p/leader/sub/clock", false},
		{"/p/sub/clock", false},
		{"/p/sub/leader/694d9a4c2b3e1f07", false},
		{"/p/clock2", false},
		{"/p/leader/clock", false}, // the clock of a store at /p/leader/
		{"/p/leader/694D9A4C", false},
		{"/p/", false},
	} {
		if got := ownKey("/p/", tc.key); got != tc.want {
			t.Errorf("ownKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// openPrefix opens a node on prefix (closed again if it opens) and
// returns Open's error.
func openPrefix(t *testing.T, c *etcdtest.Cluster, brokerAddr, prefix string) error {
	t.Helper()
	n, err := Open(Config{Endpoints: c.Endpoints(), Prefix: prefix, Server: server.Options{Broker: brokerAddr}})
	if err == nil {
		_ = n.cli.Close()
	}
	return err
}

// A store nested inside another's prefix (or around it) would read and
// write the other's keys as its own: Open refuses it, whichever started
// first, and "/" alone.
func TestOpenRefusesNestedPrefixes(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a") // DefaultPrefix, /ssgen/
	a.waitLeader(t)
	cl := clienttest.Dial(t, b.URL())
	if _, err := cl.Set(clienttest.Context(t), []byte("fresh"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}

	// An ancestor holds a store.
	for _, p := range []string{"/ssgen/sub", "/ssgen/sub/deeper/", "/ssgen/k/", "/"} {
		err := openPrefix(t, c, b.URL(), p)
		var pe *PrefixError
		if !errors.Is(err, ErrPrefixOverlap) || !errors.As(err, &pe) {
			t.Fatalf("prefix %q inside /ssgen/: %v, want ErrPrefixOverlap", p, err)
		}
		if p != "/" && pe.Other != DefaultPrefix {
			t.Fatalf("prefix %q: %v, want it to name %q", p, err, DefaultPrefix)
		}
	}
	// The same store's second instance, and siblings, open.
	for _, p := range []string{DefaultPrefix, "/ssgen2/", "/other/sub/"} {
		if err := openPrefix(t, c, b.URL(), p); err != nil {
			t.Fatalf("prefix %q: %v", p, err)
		}
	}

	// A descendant started first: the ancestor finds its keys.
	b2 := brokertest.Start(t)
	inner := startNode(t, c, b2.URL(), "inner", func(cfg *Config) { cfg.Prefix = "/outer/inner/" })
	inner.waitLeader(t)
	err := openPrefix(t, c, b.URL(), "/outer/")
	var pe *PrefixError
	if !errors.As(err, &pe) || !errors.Is(err, ErrPrefixOverlap) || !strings.HasPrefix(pe.Key, "/outer/inner/") {
		t.Fatalf("prefix /outer/ around /outer/inner/: %v, want a PrefixError naming an /outer/inner/ key", err)
	}
	// Still refused once the nested store's instances are gone: its clock
	// stays once it wrote anything.
	if _, err := clienttest.Dial(t, b2.URL()).Set(clienttest.Context(t), []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	inner.stop()
	if err := openPrefix(t, c, b.URL(), "/outer/"); !errors.Is(err, ErrPrefixOverlap) {
		t.Fatalf("prefix /outer/ around a stopped /outer/inner/: %v, want ErrPrefixOverlap", err)
	}
}

// TestPrefixWithALeaderSegment: a store at /plant/leader/ is not taken for
// an election at /plant/ (its keys go on past a "/"): its second instance
// and a sibling /plant/site-b/ open, a nested prefix inside it is refused.
func TestPrefixWithALeaderSegment(t *testing.T) {
	c := etcdtest.Start(t, 1)
	b := brokertest.Start(t)
	a := startNode(t, c, b.URL(), "a", func(cfg *Config) { cfg.Prefix = "/plant/leader/" })
	a.waitLeader(t)
	if _, err := clienttest.Dial(t, b.URL()).Set(clienttest.Context(t), []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/plant/leader/", "/plant/site-b/"} {
		if err := openPrefix(t, c, b.URL(), p); err != nil {
			t.Fatalf("prefix %q beside or equal to /plant/leader/: %v", p, err)
		}
	}
	if err := openPrefix(t, c, b.URL(), "/plant/leader/x/"); !errors.Is(err, ErrPrefixOverlap) {
		t.Fatalf("prefix /plant/leader/x/ inside /plant/leader/: %v, want ErrPrefixOverlap", err)
	}
}
