package versions_test

import (
	"bytes"
	"testing"

	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v1"
	"github.com/ssgen/ssgen/internal/tests/e2e/versions/v2"
	"github.com/ssgen/ssgen/runtime/migrate"
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
