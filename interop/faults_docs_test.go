package interop

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/mqtt"

	"github.com/ssgen/ssgen/server"
)

// TestDocsFaultSnippets runs docs/testing.md's official Go SDK snippets
// (keep them the same) against a server with fault injection, so that
// they compile against the SDK version of this module and do what the
// page says: CONNACK 0x89 once, the retry connects; a PUBLISH answered,
// then DISCONNECT 0x98 a second later, and the session reconnects.
func TestDocsFaultSnippets(t *testing.T) {
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", FaultInjection: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	host, port := splitAddr(t, srv.Addr())
	ctx := bounded(t)
	uuid := "docs-" + clientID(t, "id")

	// --- as in docs/testing.md ---
	client, err := mqtt.NewSessionClient("docs-snippet", mqtt.TCPConnection(host, port),
		mqtt.WithConnectUserProperties{
			"fault:rejectconnect": "137", "fault:requestid": uuid, // CONNACK 0x89 once; the retry connects
		})
	// --- end ---
	if err != nil {
		t.Fatal(err)
	}
	connects := make(chan struct{}, 4)
	disconnects := make(chan *mqtt.DisconnectEvent, 4)
	client.RegisterConnectEventHandler(func(*mqtt.ConnectEvent) { connects <- struct{}{} })
	client.RegisterDisconnectEventHandler(func(e *mqtt.DisconnectEvent) { disconnects <- e })
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Stop() })
	select {
	case <-connects:
	case <-ctx.Done():
		t.Fatal("no connection after the refused CONNECT")
	}

	// --- as in docs/testing.md ---
	_, err = client.Publish(ctx, "foo", []byte("foo"), mqtt.WithQoS(1), mqtt.WithUserProperties{
		"fault:disconnect": "152", // DISCONNECT 0x98, administrative action
		"fault:delay":      "1",   // after the PUBACK, one second later
	})
	// --- end ---
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	select {
	case e := <-disconnects:
		if e.ReasonCode == nil || *e.ReasonCode != 0x98 {
			t.Fatalf("disconnect %+v, want 0x98", e)
		}
	case <-ctx.Done():
		t.Fatal("no DISCONNECT after the delay")
	}
	select {
	case <-connects:
	case <-time.After(testTimeout):
		t.Fatal("no reconnect")
	}
}
