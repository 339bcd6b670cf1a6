package interop

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/mqtt"
	"github.com/Azure/iot-operations-sdks/go/mqtt/retry"
	"github.com/Azure/iot-operations-sdks/go/protocol"
	"github.com/Azure/iot-operations-sdks/go/services/statestore"
)

// testTimeout bounds every test: it is far above what a loopback round trip
// needs, so reaching it means a lost response, never a slow machine.
const testTimeout = 20 * time.Second

// ssClient is the SDK's state store client with string keys and values.
type ssClient = statestore.Client[string, string]

// bounded returns a context that ends at testTimeout or when the test ends.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// splitAddr turns the server's host:port into what the SDK's TCP provider
// wants.
func splitAddr(t *testing.T, addr string) (string, uint16) {
	t.Helper()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("server address %q: %v", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		t.Fatalf("server port %q: %v", portText, err)
	}
	return host, uint16(port)
}

// dial connects one official SDK session client plus its state store client
// to srv, under a client id derived from the test name and suffix, and
// returns once the session is up and the response topic subscribed. srv
// tears both down when the test ends.
func dial(t *testing.T, srv *testServer, suffix string) *ssClient {
	t.Helper()
	ctx := bounded(t)
	host, port := splitAddr(t, srv.addr)

	id := clientID(t, suffix)
	mc, err := mqtt.NewSessionClient(id, mqtt.TCPConnection(host, port),
		// A refused or dropped connection is a test failure, not
		// something to retry for a minute.
		mqtt.WithConnectionRetry(&retry.ExponentialBackoff{MaxAttempts: 3}),
		mqtt.WithConnectionTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("NewSessionClient: %v", err)
	}
	connected := make(chan struct{}, 1)
	mc.RegisterConnectEventHandler(func(*mqtt.ConnectEvent) {
		select {
		case connected <- struct{}{}:
		default:
		}
	})
	fatal := make(chan error, 1)
	mc.RegisterFatalErrorHandler(func(err error) {
		select {
		case fatal <- err:
		default:
		}
	})
	if err := mc.Start(); err != nil {
		t.Fatalf("session client Start: %v", err)
	}
	srv.own(nil, mc)
	select {
	case <-connected:
	case err := <-fatal:
		t.Fatalf("session client %s could not connect: %v", id, err)
	case <-ctx.Done():
		t.Fatalf("session client %s: no CONNACK within %v", id, testTimeout)
	}

	app, err := protocol.NewApplication()
	if err != nil {
		t.Fatalf("NewApplication: %v", err)
	}
	c, err := statestore.New[string, string](app, mc)
	if err != nil {
		t.Fatalf("statestore.New: %v", err)
	}
	srv.own(c, nil)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("statestore client Start: %v", err)
	}
	return c
}

// clientID makes a readable MQTT client id, unique per test and role.
func clientID(t *testing.T, suffix string) string {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return "interop-" + name + "-" + suffix
}

// awaitNotify returns the next notification on ch or fails the test at the
// context's end.
func awaitNotify(ctx context.Context, t *testing.T, ch <-chan statestore.Notify[string, string], what string) statestore.Notify[string, string] {
	t.Helper()
	var n statestore.Notify[string, string]
	select {
	case got, ok := <-ch:
		if !ok {
			t.Fatalf("%s: notification channel closed", what)
		}
		n = got
	case <-ctx.Done():
		t.Fatalf("%s: no notification before the test deadline", what)
	}
	return n
}
