package migrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestResumeRefusesOtherSchema: a position saved by a run to schema "s1"
// is not resumed by a run to "s2" or with other declarations (a typed
// error that says how to proceed, nothing touched); Restart discards it,
// and the finished run records what the data was migrated to.
func TestResumeRefusesOtherSchema(t *testing.T) {
	const n = 2000
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := context.Background()
	fill(t, c, n)
	if _, ok, err := migrate.LastRun(ctx, c, ""); ok || err != nil {
		t.Fatalf("LastRun before any run: %v, %v", ok, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	var backup bytes.Buffer
	_, err := migrate.Apply(cctx, c, decls, migrate.Options{SchemaID: "s1", Backup: &backup, Progress: func(migrate.Progress) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Apply: %v", err)
	}
	before, err := migrate.Validate(ctx, c, decls)
	if err != nil {
		t.Fatal(err)
	}

	_, err = migrate.Apply(ctx, c, decls, migrate.Options{SchemaID: "s2", Backup: &backup})
	var pm *migrate.PositionMismatchError
	if !errors.Is(err, migrate.ErrPositionMismatch) || !errors.As(err, &pm) || pm.SavedSchema != "s1" || !strings.Contains(err.Error(), "Restart") {
		t.Fatalf("resume with another schema: %v", err)
	}
	other := []migrate.Decl{{Name: "item", Pattern: "item/0*", Codec: upgrade{}}}
	if _, err := migrate.Apply(ctx, c, other, migrate.Options{SchemaID: "s1", Backup: &backup}); !errors.Is(err, migrate.ErrPositionMismatch) {
		t.Fatalf("resume with other declarations: %v", err)
	}
	if after, _ := migrate.Validate(ctx, c, decls); after[0].Current != before[0].Current || after[0].Outdated != before[0].Outdated {
		t.Fatalf("a refused run touched keys: %+v, then %+v", before, after)
	}

	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	res, err := migrate.Apply(ctx, c, decls, migrate.Options{SchemaID: "s2", Restart: true, Backup: &backup, Now: func() time.Time { return at }})
	if err != nil || res.Resumed || res.Seen != n {
		t.Fatalf("Apply with Restart: %+v, %v", res, err)
	}
	validate(t, c, n, 0)
	done, ok, err := migrate.LastRun(ctx, c, "default")
	if err != nil || !ok || done.Schema != "s2" || !done.At.Equal(at) || done.Seen != n || done.Rewritten != res.Rewritten || len(done.Decls) != 1 || done.Decls[0] != "item" {
		t.Fatalf("LastRun: %+v, %v, %v", done, ok, err)
	}
}

// TestResumeSameSchema: a run to the same schema resumes the position.
func TestResumeSameSchema(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 2000)
	cctx, cancel := context.WithCancel(context.Background())
	var backup bytes.Buffer
	if _, err := migrate.Apply(cctx, c, decls, migrate.Options{SchemaID: "s1", Backup: &backup, Progress: func(migrate.Progress) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	res, err := migrate.Apply(context.Background(), c, decls, migrate.Options{SchemaID: "s1", Backup: &backup})
	if err != nil || !res.Resumed {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	validate(t, c, 2000, 0)
}

// TestLastRunRefusesGarbage: bytes another client wrote under the done key
// are an error, bounded in size.
func TestLastRunRefusesGarbage(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	if _, err := c.Set(context.Background(), []byte(migrate.Prefix+"default/done"), bytes.Repeat([]byte("x"), 5000), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	_, ok, err := migrate.LastRun(context.Background(), c, "default")
	if err == nil || ok || len(err.Error()) > 200 {
		t.Fatalf("LastRun over garbage: %v, %v", ok, err)
	}
}

// guardOf guards "g/NNN" with the lock "locks/g/NNN".
func guardOf(key []byte) ([]byte, bool) {
	if !bytes.HasPrefix(key, []byte("g/")) {
		return nil, false
	}
	return append([]byte("locks/"), key...), true
}

// TestGuardedKeys: guarded keys are rewritten under their guard's lease
// with a fenced SET. A writer holding one key's lock makes the migrator
// wait for it; the writer's fenced writes meanwhile are kept, and the key
// is migrated once the writer releases the lock.
func TestGuardedKeys(t *testing.T) {
	const n = 10
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := context.Background()
	writer := dial(t, srv.URL())
	for i := range n { // every key fenced, as a guarded writer leaves it
		l, err := runtime.NewLock(writer, fmt.Appendf(nil, "locks/g/%03d", i), 5*time.Second).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.Set(ctx, fmt.Appendf(nil, "g/%03d", i), fmt.Appendf(nil, "v1:%d", i), runtime.SetOptions{FencingToken: l.Token()}); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	held, err := runtime.NewLock(writer, []byte("locks/g/009"), 5*time.Second).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := []migrate.Decl{{Name: "g", Pattern: "g/*", Codec: upgrade{}, Guard: guardOf}}
	var backup bytes.Buffer
	type out struct {
		res migrate.Result
		err error
	}
	done := make(chan out, 1)
	waiting := make(chan string, n)
	guardWaiting := func(lock, holder []byte) { waiting <- string(lock) + " " + string(holder) }
	go func() {
		res, err := migrate.Apply(ctx, c, d, migrate.Options{Backup: &backup, LockTTL: 2 * time.Second, GuardWaiting: guardWaiting})
		done <- out{res, err}
	}()
	testwait.Until(t, 20*time.Second, "the keys whose locks are free to be migrated", func() bool {
		v, _, err := c.Get(ctx, []byte("g/008"))
		return err == nil && string(v) == "v2:8"
	})
	select {
	case o := <-done:
		t.Fatalf("Apply finished while a writer held a guard lock: %+v, %v", o.res, o.err)
	default:
	}
	// Apply said which lock it waits for, and who holds it.
	if got, want := <-waiting, "locks/g/009 "+string(held.Holder()); got != want {
		t.Errorf("GuardWaiting(%s), want (%s)", got, want)
	}
	// The writer still holds its lease and writes under it: kept.
	if _, err := writer.Set(ctx, []byte("g/009"), []byte("v1:writer"), runtime.SetOptions{FencingToken: held.Token()}); err != nil {
		t.Fatalf("the guard's holder could not write: %v", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.Rewritten != n || o.res.Failed != 0 {
		t.Fatalf("Apply: %+v, %v", o.res, o.err)
	}
	if len(waiting) != 0 {
		t.Errorf("GuardWaiting called for a free lock: %s", <-waiting)
	}
	if v, _, err := c.Get(ctx, []byte("g/009")); err != nil || string(v) != "v2:writer" {
		t.Fatalf("g/009 = %q, %v; want the writer's last write, migrated", v, err)
	}
	// The guard leases were released: a writer takes a lock at once.
	if _, ok, err := runtime.NewLock(writer, []byte("locks/g/003"), time.Second).TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("guard lock left held: %v, %v", ok, err)
	}
	// One line before and one after each key's write.
	if strings.Count(backup.String(), `"step":"before"`) != n || strings.Count(backup.String(), `"step":"written"`) != n {
		t.Fatalf("backup:\n%s", backup.String())
	}
}

// TestGuardedByPathTemplates: a Decl.GuardedBy rewrites each key its
// templates shape under the lock they give; a fenced key the glob lists
// but the key template does not shape ("g/a/b/v": the glob's '*' spans
// '/') gets no lock, not a wrong one, and is left as it was (ErrFenced).
func TestGuardedByPathTemplates(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := context.Background()
	fenced := func(key, lock string) {
		t.Helper()
		l, err := runtime.NewLock(c, []byte(lock), 5*time.Second).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte(key), []byte("v1:"+key), runtime.SetOptions{FencingToken: l.Token()}); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fenced("g/a/v", "g/a/lock")
	fenced("g/b/v", "g/b/lock")
	fenced("g/a/b/v", "g/a/b/lock")
	d := migrate.Decl{Name: "g", Pattern: "g/*/v", Codec: upgrade{}}.GuardedBy("g/{id}/v", "g/{id}/lock")
	if d.Name != "g" || d.Pattern != "g/*/v" || d.Codec == nil {
		t.Fatalf("GuardedBy lost fields: %+v", d)
	}
	res, err := migrate.Apply(ctx, c, []migrate.Decl{d}, migrate.Options{Backup: &bytes.Buffer{}})
	if err != nil || res.Rewritten != 2 || res.Failed != 1 || !errors.Is(res.FirstError, migrate.ErrFenced) || !strings.Contains(res.FirstError.Error(), "g/a/b/v") {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	for key, want := range map[string]string{"g/a/v": "v2:g/a/v", "g/b/v": "v2:g/b/v", "g/a/b/v": "v1:g/a/b/v"} {
		if v, _, err := c.Get(ctx, []byte(key)); err != nil || string(v) != want {
			t.Errorf("%s = %q, %v; want %q", key, v, err, want)
		}
	}
}

// TestFencedKeyWithoutGuard: a key a guarded writer left fenced, whose
// Decl has no Guard, is not clobbered: counted as failed with ErrFenced.
func TestFencedKeyWithoutGuard(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := context.Background()
	fill(t, c, 5)
	l, err := runtime.NewLock(c, []byte("locks/item"), 5*time.Second).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	if _, err := c.Set(ctx, []byte("item/000002"), []byte("v1:fenced"), runtime.SetOptions{FencingToken: l.Token()}); err != nil {
		t.Fatal(err)
	}
	res, err := migrate.Apply(ctx, c, decls, migrate.Options{Backup: &bytes.Buffer{}})
	if err != nil || res.Failed != 1 || res.Rewritten != 4 || !errors.Is(res.FirstError, migrate.ErrFenced) || !strings.Contains(res.FirstError.Error(), "item/000002") {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	if v, _, _ := c.Get(ctx, []byte("item/000002")); string(v) != "v1:fenced" {
		t.Fatalf("fenced key clobbered: %q", v)
	}
}

type reading struct {
	Celsius float64 `json:"celsius"`
}

// TestValidateCountsVersions: a versioned codec's keys are counted by the
// version they are stored with, before and after a migration.
func TestValidateCountsVersions(t *testing.T) {
	cdc := codec.Versioned[reading]{
		Name: "Reading", JSON: true, Write: 2, Oldest: 1,
		EncodeAs: func(v reading) ([]byte, error) { return json.Marshal(v) },
		Decoders: map[int]func([]byte) (reading, error){
			1: func(b []byte) (reading, error) {
				var old struct {
					F float64 `json:"fahrenheit"`
				}
				err := json.Unmarshal(b, &old)
				return reading{Celsius: (old.F - 32) * 5 / 9}, err
			},
			2: func(b []byte) (reading, error) {
				var r reading
				err := json.Unmarshal(b, &r)
				return r, err
			},
		},
	}
	d := []migrate.Decl{migrate.For[reading]("Reading", "r/*", cdc)}
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := context.Background()
	for k, v := range map[string]string{"r/a": `{"fahrenheit":212}`, "r/b": `{"$v":1,"fahrenheit":32}`, "r/c": `{"$v":2,"celsius":3}`, "r/d": `nope`} {
		if _, err := c.Set(ctx, []byte(k), []byte(v), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := migrate.Validate(ctx, c, d)
	if err != nil || counts[0].Current != 1 || counts[0].Outdated != 2 || counts[0].Invalid != 1 || counts[0].Versions[1] != 2 || counts[0].Versions[2] != 1 || len(counts[0].Versions) != 2 {
		t.Fatalf("before: %+v, %v", counts, err)
	}
	if res, err := migrate.Apply(ctx, c, d, migrate.Options{Backup: &bytes.Buffer{}}); err != nil || res.Rewritten != 2 || res.Failed != 1 {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	counts, err = migrate.Validate(ctx, c, d)
	if err != nil || counts[0].Current != 3 || counts[0].Versions[2] != 3 || len(counts[0].Versions) != 1 {
		t.Fatalf("after: %+v, %v", counts, err)
	}
}

// TestTwoMigratorsWait: with Wait, a second migrator waits for the
// first's lease instead of failing, then runs (nothing left to rewrite).
func TestTwoMigratorsWait(t *testing.T) {
	const n = 2000
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, n)
	type out struct {
		res migrate.Result
		err error
	}
	second := make(chan out, 1)
	started := false
	var backup bytes.Buffer
	_, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup, Progress: func(migrate.Progress) {
		if !started {
			started = true
			c2 := dial(t, srv.URL())
			go func() {
				res, err := migrate.Apply(context.Background(), c2, decls, migrate.Options{Backup: &bytes.Buffer{}, Wait: true})
				second <- out{res, err}
			}()
		}
		select {
		case o := <-second:
			t.Errorf("second migrator ran while the first held the lease: %+v, %v", o.res, o.err)
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := <-second
	if o.err != nil || o.res.Rewritten != 0 || o.res.Seen != n {
		t.Fatalf("second migrator: %+v, %v", o.res, o.err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestBackupFailureTouchesNothing: a page's backup lines are written out
// before any of its keys is touched, so a backup that cannot be written
// stops Apply with every key as it was.
func TestBackupFailureTouchesNothing(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 300)
	_, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: failingWriter{}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Apply with a failing backup: %v", err)
	}
	validate(t, c, 0, 300)
}
