package migrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

func set(t *testing.T, c *runtime.Client, key, val string) {
	t.Helper()
	if _, err := c.Set(context.Background(), []byte(key), []byte(val), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c *runtime.Client, key string) string {
	t.Helper()
	b, _, err := c.Get(context.Background(), []byte(key))
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		t.Fatal(err)
	}
	return string(b)
}

func lines(t *testing.T, ls ...migrate.BackupLine) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	for _, l := range ls {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	return &b
}

func reasons(res migrate.RollbackResult) map[string]string {
	m := map[string]string{}
	for _, s := range res.Skipped {
		m[string(s.Key)] = s.Reason
	}
	return m
}

// TestRollbackRefusesCraftedLines: a backup line names any key; crafted
// lines that would write EVIL into a key no migration touched, or into a
// reserved key, are refused with their reason, and the keys keep their
// values.
func TestRollbackRefusesCraftedLines(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	set(t, c, "victim", "good")
	set(t, c, "$ssgen/schema", "published")
	set(t, c, "item/1", "v2:1")
	crafted := func() *bytes.Buffer {
		return lines(t,
			migrate.BackupLine{Key: []byte("victim"), New: []byte("good"), Old: []byte("EVIL")},
			migrate.BackupLine{Key: []byte("$ssgen/schema"), New: []byte("published"), Old: []byte("EVIL")},
		)
	}

	// Without declarations: reserved keys are still never restored.
	res, err := migrate.Rollback(context.Background(), c, lines(t,
		migrate.BackupLine{Key: []byte("$ssgen/schema"), New: []byte("published"), Old: []byte("EVIL")}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 0 || res.Refused != 1 || reasons(res)["$ssgen/schema"] != migrate.SkipReserved {
		t.Fatalf("Rollback of a reserved key: %+v", res)
	}

	// With the declarations: only their keys are restored.
	res, err = migrate.RollbackWith(context.Background(), c, crafted(), migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	r := reasons(res)
	if res.Restored != 0 || res.Refused != 2 || r["victim"] != migrate.SkipUndeclared || r["$ssgen/schema"] != migrate.SkipReserved {
		t.Fatalf("RollbackWith: %+v", res)
	}
	if got := get(t, c, "victim"); got != "good" {
		t.Fatalf("victim = %q after a crafted rollback", got)
	}
	if got := get(t, c, "$ssgen/schema"); got != "published" {
		t.Fatalf("$ssgen/schema = %q after a crafted rollback", got)
	}

	// A declared key with lines of the current format but no record of a
	// write (or a forged version) is not restored either.
	res, err = migrate.RollbackWith(context.Background(), c, lines(t,
		migrate.BackupLine{Key: []byte("item/1"), New: []byte("v2:1"), Old: []byte("v1:EVIL"), Step: migrate.StepBefore},
	), migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 0 || reasons(res)["item/1"] != migrate.SkipNotWritten {
		t.Fatalf("a line with no write: %+v", res)
	}
	res, err = migrate.RollbackWith(context.Background(), c, lines(t,
		migrate.BackupLine{Key: []byte("item/1"), New: []byte("v2:1"), Old: []byte("v1:EVIL"), Step: migrate.StepWritten, Written: "0000000000001:00000:forged"},
	), migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 0 || res.Kept != 1 || reasons(res)["item/1"] != migrate.SkipChanged {
		t.Fatalf("a line with a forged version: %+v", res)
	}
	if got := get(t, c, "item/1"); got != "v2:1" {
		t.Fatalf("item/1 = %q", got)
	}
}

// TestRollbackKeepsAnAppWriteOfTheSameBytes: an application that writes,
// after the migration, the very bytes the migrator wrote gives the key
// another version: rollback keeps it.
func TestRollbackKeepsAnAppWriteOfTheSameBytes(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 20)
	var backup bytes.Buffer
	if _, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup}); err != nil {
		t.Fatal(err)
	}
	set(t, c, "item/000007", "v2:7") // the app writes what the migrator wrote
	res, err := migrate.RollbackWith(context.Background(), c, &backup, migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 19 || res.Kept != 1 || reasons(res)["item/000007"] != migrate.SkipChanged {
		t.Fatalf("RollbackWith: %+v", res)
	}
	if got := get(t, c, "item/000007"); got != "v2:7" {
		t.Fatalf("the app's write was rolled back: %q", got)
	}
	if got := get(t, c, "item/000008"); got != "v1:8" {
		t.Fatalf("item/000008 = %q after rollback", got)
	}
}

// TestRollbackOfABackupWithoutSteps: a backup of an earlier release (no
// step, no written version) is still restored by its bytes.
func TestRollbackOfABackupWithoutSteps(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	set(t, c, "item/1", "v2:1")
	set(t, c, "item/2", "v2:other")
	res, err := migrate.RollbackWith(context.Background(), c, strings.NewReader(
		`{"key":"aXRlbS8x","old":"djE6MQ==","new":"djI6MQ==","version":"x"}`+"\n"+
			`{"key":"aXRlbS8y","old":"djE6Mg==","new":"djI6Mg==","version":"x"}`+"\n"),
		migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 1 || res.Kept != 1 || get(t, c, "item/1") != "v1:1" || get(t, c, "item/2") != "v2:other" {
		t.Fatalf("RollbackWith: %+v", res)
	}
}

// TestDeleteInTheMigratorsWindow documents what the protocol cannot
// prevent: a key is absent between the migrator's VDEL and its SET NX; a
// writer's DEL in that window finds nothing (answers not deleted) and
// the key comes back with the migrated value. The chaos rule holds the
// VDEL's answer, which widens the window (one round trip otherwise).
func TestDeleteInTheMigratorsWindow(t *testing.T) {
	srv := servertest.New(t, servertest.WithChaos(server.ChaosRule{
		Verbs: []string{"VDEL"}, Key: "item/x", Effect: server.ChaosDelay, Delay: server.Duration(5 * time.Second), Count: 1,
	}))
	migrator, writer := dial(t, srv.URL()), dial(t, srv.URL())
	set(t, writer, "item/x", "v1:x")
	done := make(chan error, 1)
	go func() {
		_, err := migrate.Apply(context.Background(), migrator, decls, migrate.Options{Backup: &bytes.Buffer{}})
		done <- err
	}()
	ctx := context.Background()
	testwait.Until(t, 10*time.Second, "the migrator's VDEL ran", func() bool {
		_, _, err := writer.Get(ctx, []byte("item/x"))
		return errors.Is(err, runtime.ErrNotFound)
	})
	deleted, _, err := writer.Del(ctx, []byte("item/x"), runtime.DelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deleted {
		t.Fatal("the writer's DEL found the key: the window was missed")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := get(t, writer, "item/x"); got != "v2:x" {
		t.Fatalf("item/x = %q, want it back migrated (v2:x)", got)
	}
}

// TestRollbackDecidesStepsPerFile: in a backup with steps, a forged line
// without a step for another declared key does not escape the version
// check: knowing only the key's current bytes, it restores nothing.
func TestRollbackDecidesStepsPerFile(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 3)
	var backup bytes.Buffer
	if _, err := migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &backup}); err != nil {
		t.Fatal(err)
	}
	set(t, c, "item/other", "v2:other") // an application's key, never migrated
	backup.Write(lines(t, migrate.BackupLine{Key: []byte("item/other"), New: []byte("v2:other"), Old: []byte("v1:EVIL"), Version: "x"}).Bytes())
	res, err := migrate.RollbackWith(context.Background(), c, &backup, migrate.RollbackOptions{Decls: decls})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 3 || res.Refused != 1 || reasons(res)["item/other"] != migrate.SkipNotWritten {
		t.Fatalf("RollbackWith: %+v", res)
	}
	if got := get(t, c, "item/other"); got != "v2:other" {
		t.Fatalf("item/other = %q after a forged line", got)
	}
}

// TestRollbackRefusesOldBytesThatDoNotDecode: with a Decl's Decodes, a
// line whose old bytes are not a value of the declaration is refused.
func TestRollbackRefusesOldBytesThatDoNotDecode(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	set(t, c, "item/1", "v2:1")
	set(t, c, "item/2", "v2:2")
	checked := []migrate.Decl{decls[0]}
	checked[0].Decodes = func(v []byte) error {
		if !bytes.HasPrefix(v, []byte("v1:")) && !bytes.HasPrefix(v, []byte("v2:")) {
			return errors.New("not an item")
		}
		return nil
	}
	res, err := migrate.RollbackWith(context.Background(), c, lines(t,
		migrate.BackupLine{Key: []byte("item/1"), New: []byte("v2:1"), Old: []byte("EVIL"), Version: "x"},
		migrate.BackupLine{Key: []byte("item/2"), New: []byte("v2:2"), Old: []byte("v1:2"), Version: "x"},
	), migrate.RollbackOptions{Decls: checked})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 1 || res.Refused != 1 || reasons(res)["item/1"] != migrate.SkipOldInvalid {
		t.Fatalf("RollbackWith: %+v", res)
	}
	if get(t, c, "item/1") != "v2:1" || get(t, c, "item/2") != "v1:2" {
		t.Fatalf("item/1 = %q, item/2 = %q", get(t, c, "item/1"), get(t, c, "item/2"))
	}
}

// TestRollbackNamesATooLongLine: a line over the limit is named, with
// the limit, not "bufio.Scanner: token too long".
func TestRollbackNamesATooLongLine(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	b := lines(t, migrate.BackupLine{Key: []byte("item/1"), New: []byte("v2:1"), Old: []byte("v1:1"), Version: "x"})
	b.WriteString("\n")
	b.WriteString(`{"key":"` + strings.Repeat("A", 65<<20) + "\"}\n")
	_, err := migrate.Rollback(context.Background(), c, b)
	if err == nil || !strings.Contains(err.Error(), "backup line 3 is longer than 64 MiB") {
		t.Fatalf("Rollback of a huge line: %v", err)
	}
}

// TestApplyWaitingForASquattedLock: Options.Waiting is told the lock key
// and what it holds when Wait finds the lease held, and a run that never
// took the lease says so (Result.Locked false).
func TestApplyWaitingForASquattedLock(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	fill(t, c, 3)
	set(t, c, migrate.Prefix+"default/lock", "squat")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls int
	res, err := migrate.Apply(ctx, c, decls, migrate.Options{Backup: &bytes.Buffer{}, Wait: true, Waiting: func(lock, holder []byte) {
		calls++
		if string(lock) != migrate.Prefix+"default/lock" || string(holder) != "squat" {
			t.Errorf("Waiting(%q, %q)", lock, holder)
		}
		cancel()
	}})
	if err == nil || calls != 1 || res.Locked {
		t.Fatalf("Apply: %+v, %v, %d calls of Waiting", res, err, calls)
	}
	res, err = migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &bytes.Buffer{}})
	if !errors.Is(err, migrate.ErrBusy) || res.Locked {
		t.Fatalf("Apply without Wait: %+v, %v", res, err)
	}
	if _, _, err := c.Del(context.Background(), []byte(migrate.Prefix+"default/lock"), runtime.DelOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = migrate.Apply(context.Background(), c, decls, migrate.Options{Backup: &bytes.Buffer{}})
	if err != nil || !res.Locked || res.Rewritten != 3 {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
}
