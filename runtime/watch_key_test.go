package runtime_test

import (
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestKeyWatchResyncCarriesTheDecodedValue restarts the broker under a
// typed watch: the watcher must get a Resync event whose value is decoded,
// since changes made while it was away are not replayed.
func TestKeyWatchResyncCarriesTheDecodedValue(t *testing.T) {
	broker := brokertest.Start(t)
	servertest.NewExternal(t, broker.URL())
	c := dial(t, broker.URL())
	ctx := testCtx(t)
	k := runtime.NewKey[thermoSetPoint](c, []byte("sp"), codec.MsgPack[thermoSetPoint]{})
	if _, err := k.Set(ctx, thermoSetPoint{Celsius: 20, Mode: "heat"}); err != nil {
		t.Fatal(err)
	}

	events := make(chan runtime.KeyEvent[thermoSetPoint], 64)
	go func() {
		for ev, err := range k.Watch(ctx) {
			if err == nil {
				events <- ev
			}
		}
	}()
	// Make sure the watch is live before the restart: write until the
	// watcher reports a write.
	live := time.NewTicker(20 * time.Millisecond)
	defer live.Stop()
	for seen := false; !seen; {
		if _, err := k.Set(ctx, thermoSetPoint{Celsius: 21, Mode: "heat"}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			seen = ev.Kind == runtime.EventSet && ev.Value.Celsius == 21
		case <-live.C:
		case <-ctx.Done():
			t.Fatal("the watch never reported a write")
		}
	}

	broker.Restart()
	for {
		ev := receive(t, "a Resync after the restart", events)
		if ev.Kind != runtime.EventResync {
			continue
		}
		if !ev.Found || ev.Value.Celsius != 21 || ev.Value.Mode != "heat" || ev.Version.IsZero() {
			t.Fatalf("Resync event %+v, want the decoded current value", ev)
		}
		return
	}
}
