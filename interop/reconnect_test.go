package interop

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/services/statestore"
)

// The SDK reconnects with Clean Start false and gives up for good unless
// the broker reports Session Present, so the session must outlive a dropped
// connection. The server drops the client's KEYNOTIFY registrations when
// the connection goes; after reconnecting the SDK sends KEYNOTIFY again,
// then GETs the key and reports what it read, after which real
// notifications flow again.
// awaitSkipping is awaitNotify passing over notifications whose value is
// one of stale.
func awaitSkipping(ctx context.Context, t *testing.T, ch <-chan statestore.Notify[string, string], what string, stale ...string) statestore.Notify[string, string] {
	t.Helper()
	for {
		n := awaitNotify(ctx, t, ch, what)
		if !slices.Contains(stale, n.Value) {
			return n
		}
	}
}

func TestReconnectResumesSessionAndNotifications(t *testing.T) {
	srv := startServer(t)
	watcher := dialConn(t, srv, "watcher")
	writer := dial(t, srv, "writer")
	ctx := bounded(t)
	ch := watch(t, watcher.client, "rk")
	id := watcher.client.ID()

	if _, err := writer.Set(ctx, "rk", "before"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if n := awaitNotify(ctx, t, ch, "SET before the drop"); n.Value != "before" {
		t.Fatalf("notification value %q, want %q", n.Value, "before")
	}

	// Keep the watcher away while the server notices the drop, and change
	// the key meanwhile: that change is not notified, only re-read.
	watcher.hold()
	watcher.drop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for slices.Contains(srv.eng.Watchers([]byte("rk")), id) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the server kept the KEYNOTIFY registration of a disconnected client")
		}
	}
	during, err := writer.Set(ctx, "rk", "during")
	if err != nil {
		t.Fatalf("Set while the watcher is away: %v", err)
	}
	watcher.release()
	watcher.awaitConnect(ctx, t, "reconnect to the same session")

	// "before" may come again: the session resends a notification whose
	// PUBACK the drop cut off.
	n := awaitSkipping(ctx, t, ch, "re-read after reconnect", "before")
	if n.Operation != "SET" || n.Value != "during" || n.Version.Compare(during.Version) != 0 {
		t.Fatalf("after reconnect: {%q %q %v}, want {SET during %v}", n.Operation, n.Value, n.Version, during.Version)
	}
	after, err := writer.Set(ctx, "rk", "after")
	if err != nil {
		t.Fatalf("Set after reconnect: %v", err)
	}
	n = awaitSkipping(ctx, t, ch, "SET after reconnect", "before")
	if n.Operation != "SET" || n.Value != "after" || n.Version.Compare(after.Version) != 0 {
		t.Fatalf("after reconnect: {%q %q %v}, want {SET after %v}", n.Operation, n.Value, n.Version, after.Version)
	}
	if got, err := watcher.client.Get(ctx, "rk"); err != nil || got.Value != "after" {
		t.Fatalf("Get on the resumed session = %v, %v", got, err)
	}
}
