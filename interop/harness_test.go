package interop

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
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
	return dialConn(t, srv, suffix).client
}

// sdkConn is a dialled SDK client with a handle on its TCP connection.
type sdkConn struct {
	client   *ssClient
	session  *mqtt.SessionClient   // the MQTT client under client, for other SDK components
	app      *protocol.Application // the application client was made in
	connects chan struct{}         // one per CONNACK
	fatal    chan error            // the session client gave up

	mu   sync.Mutex
	conn net.Conn      // the current connection
	gate chan struct{} // while non-nil, new connections wait for it to close
}

// hold makes reconnection attempts wait until release.
func (c *sdkConn) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = make(chan struct{})
}

// release lets waiting and later connection attempts through.
func (c *sdkConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate != nil {
		close(c.gate)
		c.gate = nil
	}
}

// drop closes the current TCP connection under the SDK, as a network
// failure would; the SDK then reconnects to the same session.
func (c *sdkConn) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// awaitConnect waits for the session client's next CONNACK.
func (c *sdkConn) awaitConnect(ctx context.Context, t *testing.T, what string) {
	t.Helper()
	select {
	case <-c.connects:
	case err := <-c.fatal:
		t.Fatalf("%s: session client gave up: %v", what, err)
	case <-ctx.Done():
		t.Fatalf("%s: no CONNACK before the test deadline", what)
	}
}

func dialConn(t *testing.T, srv *testServer, suffix string) *sdkConn {
	t.Helper()
	return dialAs(t, srv, clientID(t, suffix))
}

// dialAs is dialConn under the client id id.
func dialAs(t *testing.T, srv *testServer, id string) *sdkConn {
	t.Helper()
	ctx := bounded(t)
	host, port := splitAddr(t, srv.addr)
	sc := &sdkConn{connects: make(chan struct{}, 16), fatal: make(chan error, 1)}
	tcp := mqtt.TCPConnection(host, port)
	provider := func(ctx context.Context) (net.Conn, error) {
		sc.mu.Lock()
		gate := sc.gate
		sc.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		conn, err := tcp(ctx)
		if err == nil {
			sc.mu.Lock()
			sc.conn = conn
			sc.mu.Unlock()
		}
		return conn, err
	}

	mc, err := mqtt.NewSessionClient(id, provider,
		// A refused or dropped connection is a test failure, not
		// something to retry for a minute.
		mqtt.WithConnectionRetry(&retry.ExponentialBackoff{MaxAttempts: 3}),
		mqtt.WithConnectionTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("NewSessionClient: %v", err)
	}
	mc.RegisterConnectEventHandler(func(*mqtt.ConnectEvent) {
		select {
		case sc.connects <- struct{}{}:
		default:
		}
	})
	mc.RegisterFatalErrorHandler(func(err error) {
		select {
		case sc.fatal <- err:
		default:
		}
	})
	if err := mc.Start(); err != nil {
		t.Fatalf("session client Start: %v", err)
	}
	srv.own(nil, mc)
	sc.awaitConnect(ctx, t, "session client "+id)

	app, err := protocol.NewApplication()
	if err != nil {
		t.Fatalf("NewApplication: %v", err)
	}
	sc.session, sc.app = mc, app
	sc.client, err = statestore.New[string, string](app, mc)
	if err != nil {
		t.Fatalf("statestore.New: %v", err)
	}
	srv.own(sc.client, nil)
	if err := sc.client.Start(ctx); err != nil {
		t.Fatalf("statestore client Start: %v", err)
	}
	return sc
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
