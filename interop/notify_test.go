package interop

import (
	"testing"

	"github.com/Azure/iot-operations-sdks/go/services/statestore"
)

// watch registers a notification channel and a KEYNOTIFY for key on c.
func watch(t *testing.T, c *ssClient, key string) <-chan statestore.Notify[string, string] {
	t.Helper()
	ch, stop := c.Notify(key)
	t.Cleanup(stop)
	if err := c.KeyNotify(bounded(t), key); err != nil {
		t.Fatalf("KeyNotify %q: %v", key, err)
	}
	return ch
}

// The SDK never subscribes to its notify topic (its receiver is never
// started), so these pass only if the server delivers notifications into
// the watcher's session the way the real broker does. Each step waits for
// its notification before the next change: the SDK hands every PUBLISH to
// its own goroutine, so it may reorder notifications that arrive together.
func TestNotificationsForSetDelAndVDel(t *testing.T) {
	srv := startServer(t)
	watcher := dial(t, srv, "watcher")
	writer := dial(t, srv, "writer")
	ctx := bounded(t)
	ch := watch(t, watcher, "nk")

	expect := func(what, op, value string, set *statestore.Response[bool]) {
		t.Helper()
		n := awaitNotify(ctx, t, ch, what)
		if n.Key != "nk" || n.Operation != op || n.Value != value {
			t.Fatalf("%s: notification {%q %q %q}, want {%q %q %q}", what, n.Key, n.Operation, n.Value, "nk", op, value)
		}
		if n.Version.IsZero() {
			t.Fatalf("%s: notification without __ts", what)
		}
		if set != nil && n.Version.Compare(set.Version) != 0 {
			t.Fatalf("%s: notification version %v, SET returned %v", what, n.Version, set.Version)
		}
	}

	set, err := writer.Set(ctx, "nk", "v1")
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	expect("SET by another client", "SET", "v1", set)

	if res, err := writer.Del(ctx, "nk"); err != nil || res.Value != 1 {
		t.Fatalf("Del = %v, %v", res, err)
	}
	expect("DEL", "DELETE", "", nil)

	set, err = writer.Set(ctx, "nk", "")
	if err != nil {
		t.Fatalf("Set empty: %v", err)
	}
	expect("SET of an empty value", "SET", "", set)

	set, err = watcher.Set(ctx, "nk", "own")
	if err != nil {
		t.Fatalf("watcher's own Set: %v", err)
	}
	expect("the watcher's own SET", "SET", "own", set)

	if res, err := writer.VDel(ctx, "nk", "own"); err != nil || res.Value != 1 {
		t.Fatalf("VDel = %v, %v", res, err)
	}
	expect("VDEL", "DELETE", "", nil)

	// After KEYNOTIFY STOP the watcher hears nothing more about nk; a
	// still-watched key proves delivery went on, and the SDK filters by
	// key, so a stray nk notification would show up on ch.
	if err := watcher.KeyNotifyStop(ctx, "nk"); err != nil {
		t.Fatalf("KeyNotifyStop: %v", err)
	}
	other := watch(t, watcher, "other")
	if _, err := writer.Set(ctx, "nk", "unwatched"); err != nil {
		t.Fatalf("Set after stop: %v", err)
	}
	if _, err := writer.Set(ctx, "other", "o"); err != nil {
		t.Fatalf("Set other: %v", err)
	}
	if n := awaitNotify(ctx, t, other, "SET of the still-watched key"); n.Value != "o" {
		t.Fatalf("other: notification value %q, want %q", n.Value, "o")
	}
	select {
	case n := <-ch:
		t.Fatalf("notification after KEYNOTIFY STOP: {%q %q %q}", n.Key, n.Operation, n.Value)
	default:
	}
}

func TestNotificationForExpiry(t *testing.T) {
	srv := startServer(t)
	watcher := dial(t, srv, "watcher")
	writer := dial(t, srv, "writer")
	ctx := bounded(t)
	ch := watch(t, watcher, "ek")

	set, err := writer.Set(ctx, "ek", "soon gone", statestore.WithExpiry(shortTTL))
	if err != nil {
		t.Fatalf("Set with expiry: %v", err)
	}
	if n := awaitNotify(ctx, t, ch, "SET with expiry"); n.Operation != "SET" || n.Value != "soon gone" || n.Version.Compare(set.Version) != 0 {
		t.Fatalf("SET notification {%q %q %v}, want {SET %q %v}", n.Operation, n.Value, n.Version, "soon gone", set.Version)
	}
	// Nobody touches the key: the DELETE comes from the engine's own
	// expiry, as on the real service.
	passTTL(srv)
	n := awaitNotify(ctx, t, ch, "expiry")
	if n.Operation != "DELETE" || n.Value != "" || n.Version.IsZero() {
		t.Fatalf("expiry notification {%q %q %v}, want DELETE with a version", n.Operation, n.Value, n.Version)
	}
}
