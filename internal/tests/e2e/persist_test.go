package e2e_test

import (
	"testing"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestAPersistKeySurvivesARestartOfTheStore writes a key the schema marks
// persist: true and one it does not, restarts a store that keeps only the
// keys written with aio-persistence=true, and finds only the first: the
// generated accessor sets the flag on every write without being asked.
func TestAPersistKeySurvivesARestartOfTheStore(t *testing.T) {
	dir := t.TempDir()
	first := servertest.New(t, servertest.WithOptions(func(o *server.Options) { o.DataDir = dir }))
	b := &backend{srv: first, url: first.URL()}
	c := b.dial(t)
	ctx := testCtx(t)
	th := thermostat(t, c, "kitchen")
	if _, err := th.Calibration().Set(ctx, 0.25); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Firmware().Set(ctx, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second := servertest.New(t, servertest.WithOptions(func(o *server.Options) { o.DataDir = dir }))
	if _, ok := second.Engine().Lookup([]byte("thermostats/kitchen/calibration")); !ok {
		t.Error("the persist: true key is gone after a restart")
	}
	if _, ok := second.Engine().Lookup([]byte("thermostats/kitchen/firmware")); ok {
		t.Error("a key without persist survived a restart: the flag was sent for it too")
	}
	b2 := &backend{srv: second, url: second.URL()}
	e, err := thermostat(t, b2.dial(t), "kitchen").Calibration().Get(testCtx(t))
	if err != nil || e.Value != 0.25 {
		t.Fatalf("Calibration after the restart: %v, %v; want 0.25", e.Value, err)
	}
}
