package migrate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server/servertest"
)

// upgrade is a stand-in for a generated key's codec: "v1:x" is written
// today as "v2:x"; anything else but "v2:..." does not decode.
type upgrade struct{}

func (upgrade) Current(b []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(b, []byte("v2:")):
		return b, nil
	case bytes.HasPrefix(b, []byte("v1:")):
		return append([]byte("v2:"), b[3:]...), nil
	}
	return nil, errors.New("not a value")
}

var decls = []migrate.Decl{{Name: "item", Pattern: "item/*", Codec: upgrade{}}}

func dial(t testing.TB, url string) *runtime.Client {
	t.Helper()
	cfg, err := runtime.FromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func fill(t testing.TB, c *runtime.Client, n int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.Set(ctx, fmt.Appendf(nil, "item/%06d", i), fmt.Appendf(nil, "v1:%d", i), runtime.SetOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func validate(t testing.TB, c *runtime.Client, current, outdated int64) {
	t.Helper()
	counts, err := migrate.Validate(context.Background(), c, decls)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 1 || counts[0].Current != current || counts[0].Outdated != outdated || counts[0].Invalid != 0 {
		t.Fatalf("Validate: %+v, want %d current, %d outdated", counts, current, outdated)
	}
}

// TestApplyWithWriters migrates a store while writers write new values:
// no write is lost and every key ends at the current version. It runs
// over 100,000 keys without -race, and over 5,000 under -race (2,000 with
// -short), where every request is several times slower.
func TestApplyWithWriters(t *testing.T) {
	n := 100000
	switch {
	case testing.Short():
		n = 2000
	case raceEnabled:
		n = 5000
	}
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, n)
	validate(t, c, 0, int64(n))

	stop := make(chan struct{})
	last := make([]map[int][]byte, 4)
	var wg sync.WaitGroup
	for w := range last {
		last[w] = map[int][]byte{}
		wc := dial(t, srv.URL())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (j*4 + w) % n // each writer owns its keys
				v := fmt.Appendf(nil, "v2:w%d-%d", w, j)
				if _, err := wc.Set(context.Background(), fmt.Appendf(nil, "item/%06d", i), v, runtime.SetOptions{}); err != nil {
					t.Error(err)
					return
				}
				last[w][i] = v
			}
		}()
	}
	var backup bytes.Buffer
	res, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup, Workers: 32})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 0 || res.Seen < int64(n) {
		t.Fatalf("Apply: %+v", res)
	}
	validate(t, c, int64(n), 0)
	written := 0
	for _, m := range last {
		for i, v := range m {
			written++
			got, _, err := c.Get(context.Background(), fmt.Appendf(nil, "item/%06d", i))
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("item/%06d = %q, %v; the writer's last write was %q", i, got, err, v)
			}
		}
	}
	t.Logf("%d keys, %d rewritten, %d written by writers meanwhile", n, res.Rewritten, written)
	if pos, _, err := c.Get(context.Background(), []byte(migrate.Prefix+"default/position")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("position left after a finished run: %q", pos)
	}
}

// TestApplyKilledAndResumed kills a migrator (its connection closed) after
// its first page; a second one waits out the lease, resumes at the saved
// position and finishes.
func TestApplyKilledAndResumed(t *testing.T) {
	const n = 3000
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, n)

	victim := dial(t, srv.URL())
	var backup bytes.Buffer
	_, err := migrate.Apply(context.Background(), victim, decls, migrate.Options{
		Backup: &backup, LockTTL: 500 * time.Millisecond, SchemaID: "s1",
		// A process killed: its connection drops, its lease is not released.
		Progress: func(migrate.Progress) { _ = victim.Close() },
	})
	if err == nil {
		t.Fatal("Apply on a closed client succeeded")
	}
	if _, _, err := c.Get(context.Background(), []byte(migrate.Prefix+"default/position")); err != nil {
		t.Fatalf("no position saved: %v", err)
	}
	var res migrate.Result
	testwait.Until(t, 10*time.Second, "the dead migrator's lease to expire", func() bool {
		res, err = migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup, SchemaID: "s1"})
		return !errors.Is(err, migrate.ErrBusy)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Seen >= n {
		t.Fatalf("second run %+v did not resume", res)
	}
	validate(t, c, n, 0)
}

// TestApplyCancelledResumes stops a run by its context and continues it.
func TestApplyCancelledResumes(t *testing.T) {
	const n = 3000
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, n)
	ctx, cancel := context.WithCancel(context.Background())
	var backup bytes.Buffer
	_, err := migrate.Apply(ctx, c, decls, migrate.Options{Backup: &backup, Progress: func(migrate.Progress) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Apply: %v", err)
	}
	var last migrate.Progress
	res, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup, Progress: func(p migrate.Progress) { last = p }})
	if err != nil || !res.Resumed {
		t.Fatalf("second Apply: %+v, %v", res, err)
	}
	// The resumed run's progress counts what it lists, to the end.
	if last.Done != res.Seen || last.Total != res.Seen || res.Seen >= n {
		t.Errorf("resumed run: last progress %+v, result %+v (of %d keys)", last, res, n)
	}
	validate(t, c, n, 0)
}

// TestTwoMigrators: while one runs, another is refused with ErrBusy.
func TestTwoMigrators(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 3000)
	var second error
	once := sync.Once{}
	var backup bytes.Buffer
	_, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup, Progress: func(migrate.Progress) {
		once.Do(func() {
			_, second = migrate.Apply(context.Background(), dial(t, srv.URL()), decls, migrate.Options{Backup: &bytes.Buffer{}})
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(second, migrate.ErrBusy) {
		t.Fatalf("second migrator: %v, want ErrBusy", second)
	}
}

// TestRollback restores the backup except for a key written since.
func TestRollback(t *testing.T) {
	const n = 500
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, n)
	var backup bytes.Buffer
	if _, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(backup.String(), "\n"); got != 2*n { // a line before and a line after each write
		t.Fatalf("%d backup lines, want %d", got, 2*n)
	}
	if _, err := c.Set(context.Background(), []byte("item/000007"), []byte("v2:since"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := migrate.Rollback(context.Background(), c, &backup)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != n-1 || res.Kept != 1 {
		t.Fatalf("Rollback: %+v", res)
	}
	validate(t, c, 1, n-1)
	if got, _, _ := c.Get(context.Background(), []byte("item/000007")); string(got) != "v2:since" {
		t.Fatalf("a write since the migration was rolled back: %q", got)
	}
	if got, _, _ := c.Get(context.Background(), []byte("item/000008")); string(got) != "v1:8" {
		t.Fatalf("item/000008 = %q after rollback", got)
	}
}

func TestRollbackRefusesGarbage(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	if _, err := migrate.Rollback(context.Background(), c, strings.NewReader("not json\n")); err == nil {
		t.Fatal("garbage backup accepted")
	}
}

// TestApplyRefusesMalformedPosition: bytes another client wrote under the
// reserved position key stop Apply with an error; no key is touched.
func TestApplyRefusesMalformedPosition(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 10)
	if _, err := c.Set(context.Background(), []byte(migrate.Prefix+"default/position"), []byte("garbage"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &bytes.Buffer{}}); err == nil || !strings.Contains(err.Error(), "malformed position") {
		t.Fatalf("Apply over a malformed position: %v", err)
	}
	validate(t, c, 0, 10)
}
