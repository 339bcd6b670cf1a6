package interop

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/iot-operations-sdks/go/protocol"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/server/servertest"
)

// The official SDKs' command invoker takes its answers on
// "clients/{invokerClientId}/{requestTopic}", and the executor, another
// client, publishes them there. These tests run an invoker and an executor
// of the official Go SDK on two clients that also use the state store, as
// the SDK's own samples and integration tests do, in both directions, on
// the embedded broker and on mosquitto with the service attached to it.

type incrementRequest struct {
	By int `json:"by"`
}

type incrementResponse struct {
	Counter int `json:"counter"`
}

// invokeTimeout bounds one invocation: a lost answer fails the test in
// seconds, not at the SDK's default of 10 s.
const invokeTimeout = 5 * time.Second

// eachBroker runs f against an embedded server and against a server
// attached to mosquitto (ssgen serve --broker).
func eachBroker(t *testing.T, f func(t *testing.T, srv *testServer)) {
	t.Run("embedded", func(t *testing.T) { f(t, startServer(t)) })
	t.Run("mosquitto", func(t *testing.T) { f(t, startExternal(t)) })
}

// startExternal starts mosquitto and a state store attached to it; the SDK
// clients dialled to the returned server connect to mosquitto. They close
// before the service and the broker stop.
func startExternal(t *testing.T) *testServer {
	t.Helper()
	broker := brokertest.Mosquitto(t)
	servertest.NewExternal(t, broker)
	u, err := url.Parse(broker)
	if err != nil {
		t.Fatalf("broker URL %q: %v", broker, err)
	}
	ts := &testServer{addr: u.Host}
	t.Cleanup(func() {
		ts.mu.Lock()
		clients, sessions := ts.clients, ts.sessions
		ts.mu.Unlock()
		within(t, "closing the SDK state store clients", func() {
			for _, c := range clients {
				c.Close()
			}
		})
		for _, s := range sessions {
			_ = s.Stop()
		}
	})
	return ts
}

// serveCounter runs an SDK command executor on c that keeps a counter in
// the state store under key, through c's own state store client, and
// answers each increment with the new count.
func serveCounter(ctx context.Context, t *testing.T, c *sdkConn, topic, key string) {
	t.Helper()
	exec, err := protocol.NewCommandExecutor(c.app, c.session,
		protocol.JSON[incrementRequest]{}, protocol.JSON[incrementResponse]{}, topic,
		func(ctx context.Context, req *protocol.CommandRequest[incrementRequest]) (*protocol.CommandResponse[incrementResponse], error) {
			cur, err := c.client.Get(ctx, key)
			if err != nil {
				return nil, err
			}
			n := 0
			if cur.Value != "" {
				if n, err = strconv.Atoi(cur.Value); err != nil {
					return nil, err
				}
			}
			n += req.Payload.By
			if _, err := c.client.Set(ctx, key, strconv.Itoa(n)); err != nil {
				return nil, err
			}
			return protocol.Respond(incrementResponse{Counter: n})
		})
	if err != nil {
		t.Fatalf("NewCommandExecutor: %v", err)
	}
	t.Cleanup(exec.Close)
	if err := exec.Start(ctx); err != nil {
		t.Fatalf("executor Start: %v", err)
	}
}

func TestCommandsBetweenTwoClientsBesideTheStateStore(t *testing.T) {
	eachBroker(t, func(t *testing.T, srv *testServer) {
		a := dialConn(t, srv, "a")
		b := dialConn(t, srv, "b")
		ctx := bounded(t)
		for _, dir := range []struct {
			name              string
			invoker, executor *sdkConn
		}{{"a invokes b", a, b}, {"b invokes a", b, a}} {
			t.Run(dir.name, func(t *testing.T) {
				topic := "rpc/samples/" + dir.executor.client.ID() + "/increment"
				key := "counter/" + dir.executor.client.ID()
				serveCounter(ctx, t, dir.executor, topic, key)

				// The SDK's default response topic: under the invoker's
				// client id, where the executor must publish.
				inv, err := protocol.NewCommandInvoker(dir.invoker.app, dir.invoker.session,
					protocol.JSON[incrementRequest]{}, protocol.JSON[incrementResponse]{}, topic)
				if err != nil {
					t.Fatalf("NewCommandInvoker: %v", err)
				}
				t.Cleanup(inv.Close)
				if err := inv.Start(ctx); err != nil {
					t.Fatalf("invoker Start: %v", err)
				}
				for i := 1; i <= 3; i++ {
					res, err := inv.Invoke(ctx, incrementRequest{By: 2}, protocol.WithTimeout(invokeTimeout))
					if err != nil {
						t.Fatalf("invocation %d: %v", i, err)
					}
					if res.Payload.Counter != 2*i {
						t.Fatalf("invocation %d: counter %d, want %d", i, res.Payload.Counter, 2*i)
					}
				}
				// The invoker's own state store client sees what the
				// executor stored, and its state store answers still
				// reach it beside the command's.
				got, err := dir.invoker.client.Get(ctx, key)
				if err != nil || got.Value != "6" {
					t.Fatalf("invoker's Get(%q) = %+v, %v; want 6", key, got, err)
				}
				if srv.eng != nil {
					// The SDK never subscribes to its notification topic:
					// only a broker that delivers notifications into the
					// session (the real one, the embedded one) reaches it.
					watchAcross(ctx, t, dir.invoker, dir.executor, key)
				}
			})
		}
	})
}

// watchAcross checks KEYNOTIFY across the two clients: the watcher is told of the
// writer's change.
func watchAcross(ctx context.Context, t *testing.T, watcher, writer *sdkConn, key string) {
	t.Helper()
	ch, stop := watcher.client.Notify(key)
	defer stop()
	if err := watcher.client.KeyNotify(ctx, key); err != nil {
		t.Fatalf("KeyNotify: %v", err)
	}
	defer func() { _ = watcher.client.KeyNotifyStop(ctx, key) }()
	if _, err := writer.client.Set(ctx, key, "0"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if n := awaitNotify(ctx, t, ch, "notification of "+key); n.Operation != "SET" || n.Value != "0" {
		t.Fatalf("notification %+v, want SET 0", n)
	}
}

// Device-style client ids (a MAC address, a serial whose hex decoding holds
// a zero byte) with the Rust and .NET SDKs' response topics under the plain
// id, "clients/{clientId}/…". The Go SDK's state store client always
// answers under the hex of its id, so the requests go through the SDK's
// generic command invoker with the other SDKs' response topic patterns
// and RESP3 payloads.
func TestDeviceStyleIDsWithTheRustAndDotNetResponseTopics(t *testing.T) {
	const service = "statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8"
	for _, id := range []string{"A4C138F0E1D2", "00124B001CAF8E21"} {
		for layout, resp := range map[string]string{
			"rust":   "clients/" + id + "/services/" + service + "/command/invoke/response",
			"dotnet": "clients/" + id + "/" + service + "/command/invoke",
		} {
			// A server each: one id's sessions must not meet.
			t.Run(id+"/"+layout, func(t *testing.T) {
				eachBroker(t, func(t *testing.T, srv *testServer) {
					c := dialAs(t, srv, id)
					ctx := bounded(t)
					inv, err := protocol.NewCommandInvoker(c.app, c.session, protocol.Raw{}, protocol.Raw{},
						service+"/command/invoke", protocol.WithResponseTopicPattern(resp))
					if err != nil {
						t.Fatalf("NewCommandInvoker: %v", err)
					}
					t.Cleanup(inv.Close)
					if err := inv.Start(ctx); err != nil {
						t.Fatalf("invoker Start: %v", err)
					}
					key := "device/" + id + "/" + layout
					for _, step := range []struct {
						args []string
						want string
					}{
						{[]string{"GET", key}, "$-1\r\n"},
						{[]string{"KEYNOTIFY", key}, "+OK\r\n"},
						{[]string{"SET", key, "on"}, "+OK\r\n"},
						{[]string{"GET", key}, "$2\r\non\r\n"},
					} {
						res, err := inv.Invoke(ctx, resp3(step.args...), protocol.WithTimeout(invokeTimeout))
						if err != nil {
							t.Fatalf("%v: %v", step.args, err)
						}
						if string(res.Payload) != step.want {
							t.Fatalf("%v = %q, want %q", step.args, res.Payload, step.want)
						}
					}
					// The SDK's own state store client on the same
					// connection (hex layout) sees the value too.
					if got, err := c.client.Get(ctx, key); err != nil || got.Value != "on" {
						t.Fatalf("state store client Get = %+v, %v", got, err)
					}
				})
			})
		}
	}
}

// resp3 is a RESP3 array of bulk strings, a state store request payload.
func resp3(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}
