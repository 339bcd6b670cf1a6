package versions_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v1"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestMigrationsRunTheUsersConversion: the generated entry point,
// versionsv2.Migrations, migrates values versionsv1 wrote through the
// user's convertSetPointV1 (which ssgen migrate cannot run): afterwards
// every key is stamped version 2 and holds Celsius, and Validate finds
// nothing outdated.
func TestMigrationsRunTheUsersConversion(t *testing.T) {
	s := newStores(t)
	ctx := ctxFor(t)
	must(s.old.SetPoint().Set(ctx, versionsv1.SetPoint{Fahrenheit: 212, Mode: versionsv1.ModeCool, Note: "boil"}))(t)
	must(s.old.SetPointJSON().Set(ctx, versionsv1.SetPoint{Fahrenheit: 32, Mode: versionsv1.ModeHeat}))(t)
	for _, room := range []string{"kitchen", "hall", "attic"} {
		must(must(s.old.Room(room))(t).Target().Set(ctx, versionsv1.SetPoint{Fahrenheit: 50, Mode: versionsv1.ModeOff}))(t)
	}
	decls := versionsv2.Migrations()
	before, err := migrate.Validate(ctx, s.c, decls)
	if err != nil {
		t.Fatal(err)
	}
	var outdated int64
	for _, n := range before {
		outdated += n.Outdated
	}
	if outdated != 5 {
		t.Fatalf("before: %+v, want 5 outdated", before)
	}
	var backup bytes.Buffer
	res, err := migrate.Apply(ctx, s.c, decls, migrate.Options{Backup: &backup})
	if err != nil || res.Rewritten != 5 || res.Failed != 0 {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	if v, ok := stamp(t, s, "versions/setpoint", false); !ok || v != 2 {
		t.Fatalf("stamp %d %v, want 2", v, ok)
	}
	if v, ok := stamp(t, s, "versions/setpoint-json", true); !ok || v != 2 {
		t.Fatalf("JSON stamp %d %v, want 2", v, ok)
	}
	got := must(s.cur.SetPoint().Get(ctx))(t).Value
	if want := (versionsv2.SetPoint{Celsius: 100, Mode: versionsv2.ModeCool, Note: "boil"}); got != want {
		t.Fatalf("SetPoint %+v, want %+v", got, want)
	}
	if got := must(must(s.cur.Room("attic"))(t).Target().Get(ctx))(t).Value; got.Celsius != 10 {
		t.Fatalf("attic %+v, want 10 °C", got)
	}
	after, err := migrate.Validate(ctx, s.c, decls)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range after {
		if n.Outdated+n.Invalid != 0 {
			t.Fatalf("after: %+v", after)
		}
	}
}

// TestMigrationsRewriteGuardedKeysUnderTheirLease: Room.Guarded values
// versionsv1 wrote under its Owner lease (so fenced: no write without the
// lock's token goes through) are migrated by versionsv2.Migrations under
// the same lock's lease, never around it: Apply waits for the room whose
// lease a writer still holds, and migrates what that writer last wrote.
func TestMigrationsRewriteGuardedKeysUnderTheirLease(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := ctxFor(t)
	old := versionsv1.New(dial(t, srv.URL())) // the guarded writer
	write := func(room string, f float64, note string) *runtime.Lease {
		r := must(old.Room(room))(t)
		lease := must(r.Owner().Acquire(ctx))(t)
		must(r.Guarded().Set(ctx, versionsv1.SetPoint{Fahrenheit: f, Mode: versionsv1.ModeHeat, Note: note}))(t)
		return lease
	}
	rooms := []string{"attic", "hall", "kitchen"}
	for _, room := range rooms {
		if err := write(room, 50, room).Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	held := write("z-held", 32, "before") // sorts last: the migrator reaches it last

	type out struct {
		res migrate.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := migrate.Apply(ctx, c, versionsv2.Migrations(), migrate.Options{Backup: &bytes.Buffer{}, LockTTL: 2 * time.Second})
		done <- out{res, err}
	}()
	testwait.Until(t, 20*time.Second, "the rooms whose Owner is free to be migrated", func() bool {
		for _, room := range rooms {
			if v, ok := stampOf(c, ctx, "versions/rooms/"+room+"/guarded"); !ok || v != 2 {
				return false
			}
		}
		return true
	})
	select {
	case o := <-done:
		t.Fatalf("Apply finished while a writer held a guard lock: %+v, %v", o.res, o.err)
	default:
	}
	// The holder still writes under its lease; the migrator has not
	// touched its key.
	if v, ok := stampOf(c, ctx, "versions/rooms/z-held/guarded"); ok {
		t.Fatalf("z-held migrated around its lease: version %d", v)
	}
	must(must(old.Room("z-held"))(t).Guarded().Set(ctx, versionsv1.SetPoint{Fahrenheit: 212, Mode: versionsv1.ModeCool, Note: "writer"}))(t)
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.Rewritten != 4 || o.res.Failed != 0 {
		t.Fatalf("Apply: %+v, %v", o.res, o.err)
	}
	cur := versionsv2.New(dial(t, srv.URL()))
	for _, room := range rooms {
		got := must(must(cur.Room(room))(t).Guarded().Get(ctx))(t).Value
		if want := (versionsv2.SetPoint{Celsius: 10, Mode: versionsv2.ModeHeat, Note: room}); got != want {
			t.Errorf("%s: %+v, want %+v", room, got, want)
		}
	}
	curHeld := must(cur.Room("z-held"))(t)
	if got, want := must(curHeld.Guarded().Get(ctx))(t).Value, (versionsv2.SetPoint{Celsius: 100, Mode: versionsv2.ModeCool, Note: "writer"}); got != want {
		t.Errorf("z-held: %+v, want the writer's last write, migrated: %+v", got, want)
	}
	// The migrator released the guard leases: a writer takes one at once.
	lease, ok, err := curHeld.Owner().TryAcquire(ctx)
	if !ok || err != nil {
		t.Fatalf("guard lock left held: %v, %v", ok, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := migrate.Validate(ctx, c, versionsv2.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range after {
		if n.Outdated+n.Invalid != 0 {
			t.Fatalf("after: %+v", after)
		}
	}
}

// stampOf is the version stamp of the MessagePack value under path; ok
// false when it has none or cannot be read.
func stampOf(c *runtime.Client, ctx context.Context, path string) (int, bool) {
	raw, _, err := c.Get(ctx, []byte(path))
	if err != nil {
		return 0, false
	}
	v, ok, err := codec.ReadVersion(raw, false)
	return v, ok && err == nil
}
