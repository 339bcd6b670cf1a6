package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestRequestEnvelopeAsSeenByARawSubscriber(t *testing.T) {
	url := brokertest.Mosquitto(t)
	peer := coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		return coreReply(req, "+OK\r\n", "__stat", "200", "__ts", "1:0:peer")
	})
	cfg := testConfig(t, url)
	cfg.ClientID = "env/client"
	cfg.Timeout = 2500 * time.Millisecond
	c := dialConfig(t, cfg)

	ft := hlc.HLC{Wall: 1700000000000, Counter: 3, Node: "lock"}
	if _, err := c.Set(testCtx(t), []byte("k1"), []byte("v1"), runtime.SetOptions{
		Condition: runtime.IfNotExistsOrEqual, TTL: 1500 * time.Microsecond, FencingToken: ft, Persist: true,
	}); err != nil {
		t.Fatal(err)
	}
	req := <-peer.got
	if req.QoS != 1 || req.Retain {
		t.Errorf("QoS %d retain %v, want QoS 1 not retained", req.QoS, req.Retain)
	}
	if got, want := string(req.Payload), "*6\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n$3\r\nNEX\r\n$2\r\nPX\r\n$1\r\n2\r\n"; got != want {
		t.Errorf("payload %q, want %q", got, want)
	}
	pp := req.Properties
	if pp.ContentType != "application/octet-stream" {
		t.Errorf("content type %q", pp.ContentType)
	}
	if pp.PayloadFormat == nil || *pp.PayloadFormat != 0 {
		t.Errorf("payload format %v, want 0", pp.PayloadFormat)
	}
	if pp.MessageExpiry == nil || *pp.MessageExpiry != 3 {
		t.Errorf("message expiry %v, want 3 (2.5 s rounded up)", pp.MessageExpiry)
	}
	if len(pp.CorrelationData) != 16 {
		t.Errorf("correlation data %x is not 16 bytes", pp.CorrelationData)
	}
	if want := "clients/" + strings.ToUpper("656e762f636c69656e74") + "/services/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response"; pp.ResponseTopic != want {
		t.Errorf("response topic %q, want %q (a client id with / goes in hex)", pp.ResponseTopic, want)
	}
	for key, want := range map[string]string{
		"__srcId": "env/client", "__protVer": "1.0", "$partition": "env/client",
		"$high_priority": "", "__ft": ft.String(), "aio-persistence": "true",
	} {
		if got, ok := coreUser(req, key); !ok || got != want {
			t.Errorf("user property %s = %q (present %v), want %q", key, got, ok, want)
		}
	}
	ts, ok := coreUser(req, "__ts")
	if h, err := hlc.Parse(ts); !ok || err != nil || h.Node != "env/client" {
		t.Errorf("__ts %q: %v; want an HLC of node env/client", ts, err)
	}

	// A plain GET carries the envelope too, without __ft / aio-persistence.
	go func() { _, _, _ = c.Get(testCtx(t), []byte("k1")) }()
	req = <-peer.got
	for _, key := range []string{"__srcId", "__ts", "__protVer", "$partition", "$high_priority"} {
		if _, ok := coreUser(req, key); !ok {
			t.Errorf("GET lacks %s", key)
		}
	}
	for _, key := range []string{"__ft", "aio-persistence"} {
		if _, ok := coreUser(req, key); ok {
			t.Errorf("GET carries %s", key)
		}
	}
}

func TestResponseEnvelopeChecks(t *testing.T) {
	url := brokertest.Mosquitto(t)
	future := hlc.HLC{Wall: uint64(time.Now().Add(5 * time.Minute).UnixMilli()), Node: "svc"}
	replies := map[string][]string{ // key -> payload, user properties
		"nostat":   {"+OK\r\n"},
		"bad400":   {"", "__stat", "400", "__stMsg", "bad header", "__propName", "__ts", "__propVal", "zz"},
		"bad505":   {"", "__stat", "505", "__stMsg", "version", "__supProtMajVer", "1"},
		"bad500":   {"", "__stat", "500"},
		"drift":    {"+OK\r\n", "__stat", "200", "__ts", future.String()},
		"badts":    {"+OK\r\n", "__stat", "200", "__ts", "nope"},
		"garbage":  {"+OK", "__stat", "200", "__ts", "1:0:svc"},
		"newerr":   {"-ERR something brand new\r\n", "__stat", "200"},
		"fenced":   {"-ERR a fencing token is required for this request\r\n", "__stat", "200"},
		"wrongtyp": {"$2\r\nhi\r\n", "__stat", "200", "__ts", "1:0:svc"},
	}
	coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		key := strings.Split(string(req.Payload), "\r\n")[4]
		r := replies[key]
		return coreReply(req, r[0], r[1:]...)
	})
	c := dial(t, url)
	ctx := testCtx(t)
	set := func(key string) error {
		_, err := c.Set(ctx, []byte(key), []byte("v"), runtime.SetOptions{})
		return err
	}

	var pe *runtime.ProtocolError
	if err := set("nostat"); !errors.Is(err, runtime.ErrProtocol) || !errors.As(err, &pe) {
		t.Errorf("no __stat: %v, want ErrProtocol", err)
	}
	var re *runtime.RPCError
	if err := set("bad400"); !errors.As(err, &re) || re.Status != 400 || re.PropertyName != "__ts" || re.PropertyVal != "zz" || re.Message != "bad header" {
		t.Errorf("400: %v (%+v)", err, re)
	}
	if err := set("bad505"); !errors.As(err, &re) || re.Status != 505 || re.SupportedMajor != "1" {
		t.Errorf("505: %v (%+v)", err, re)
	}
	if err := set("bad500"); !errors.As(err, &re) || re.Status != 500 {
		t.Errorf("500: %v", err)
	}
	if err := set("drift"); !errors.Is(err, hlc.ErrDrift) {
		t.Errorf("__ts 5 min ahead: %v, want hlc.ErrDrift", err)
	}
	if c.Clock().Last().Wall >= future.Wall {
		t.Errorf("a refused __ts was merged into the clock")
	}
	if err := set("badts"); !errors.Is(err, runtime.ErrProtocol) || !errors.Is(err, hlc.ErrMalformed) {
		t.Errorf("bad __ts: %v", err)
	}
	if err := set("garbage"); !errors.Is(err, runtime.ErrProtocol) {
		t.Errorf("unterminated payload: %v", err)
	}
	var se *runtime.ServiceError
	if err := set("newerr"); !errors.As(err, &se) || se.Text != "something brand new" {
		t.Errorf("unknown -ERR: %v", err)
	}
	if err := set("fenced"); !errors.Is(err, runtime.ErrFencingTokenRequired) {
		t.Errorf("fencing -ERR: %v", err)
	}
	if err := set("wrongtyp"); !errors.Is(err, runtime.ErrProtocol) {
		t.Errorf("SET answered with a bulk string: %v", err)
	}
}

func TestNoResponseTimesOut(t *testing.T) {
	url := brokertest.Mosquitto(t)
	peer := coreRawResponder(t, url, nil)
	c := dial(t, url)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := c.Get(ctx, []byte("k"))
	if !errors.Is(err, runtime.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and DeadlineExceeded", err)
	}
	<-peer.got
	if c.Stats().Timeouts != 1 {
		t.Errorf("Stats().Timeouts = %d, want 1", c.Stats().Timeouts)
	}

	// The caller's own cancellation is reported as such.
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { <-peer.got; cancel2() }()
	if _, _, err := c.Get(ctx2, []byte("k")); !errors.Is(err, context.Canceled) || errors.Is(err, runtime.ErrTimeout) {
		t.Fatalf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestLateResponseIsDroppedAndCounted(t *testing.T) {
	url := brokertest.Mosquitto(t)
	release := make(chan struct{})
	coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		<-release
		return coreReply(req, "$-1\r\n", "__stat", "200")
	})
	c := dial(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := c.Get(ctx, []byte("k")); !errors.Is(err, runtime.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	close(release)
	waitFor(t, "the late response to be counted", func() bool { return c.Stats().LateResponses > 0 })
	// The client is still healthy.
	if _, _, err := c.Get(testCtx(t), []byte("k")); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Get after a late reply: %v", err)
	}
}

func TestInFlightRequestsAreBoundedByReceiveMaximum(t *testing.T) {
	url := brokertest.Mosquitto(t) // Receive Maximum 20
	peer := coreRawResponder(t, url, nil)
	cfg := testConfig(t, url)
	cfg.Timeout = 10 * time.Second
	c := dialConfig(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	const n = 25
	done := make(chan struct{}, n)
	for i := range n {
		go func() {
			_, _, _ = c.Get(ctx, []byte{byte('a' + i)})
			done <- struct{}{}
		}()
	}
	for range 20 {
		<-peer.got
	}
	time.Sleep(200 * time.Millisecond) // room for a 21st to (wrongly) go out
	if extra := len(peer.got); extra != 0 {
		t.Errorf("%d requests beyond the broker's Receive Maximum were published", extra)
	}
	if s := c.Stats(); s.InFlight != n {
		t.Errorf("InFlight = %d, want %d (sent and queued)", s.InFlight, n)
	}
	cancel()
	for range n {
		<-done
	}
}

// A request that no service receives (mosquitto's PUBACK 0x10, "no
// matching subscribers") is sent again until a state store attaches.
func TestRequestIsResentUntilAServiceSubscribes(t *testing.T) {
	b := brokertest.Start(t)
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute // the test, not the deadline, decides when to attach
	c := dialConfig(t, cfg)

	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(context.Background(), []byte("k"))
		done <- err
	}()
	for i := 0; c.Stats().NoService == 0; i++ {
		if i == 2000 {
			t.Fatal("no PUBACK 0x10 seen in 20 s")
		}
		select {
		case err := <-done:
			t.Fatalf("Get returned %v before any service attached", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	servertest.NewExternal(t, b.URL())
	select {
	case err := <-done:
		if !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Get after the service attached: %v, want ErrNotFound", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Get still waiting 30 s after the service attached")
	}
	if s := c.Stats(); s.Requests < 2 || s.NoService < 1 {
		t.Errorf("Stats = %+v, want the request sent at least twice", s)
	}
}

// With Config.NoServiceWait, a request the broker keeps answering "no
// matching subscribers" ends with ErrNoService, long before its timeout.
func TestNoServiceWaitEndsARequestNobodyReceives(t *testing.T) {
	b := brokertest.Start(t)
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute
	cfg.NoServiceWait = 100 * time.Millisecond
	c := dialConfig(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := c.Get(ctx, []byte("k"))
	if !errors.Is(err, runtime.ErrNoService) || ctx.Err() != nil {
		t.Fatalf("Get: %v, want ErrNoService before the test's deadline", err)
	}
	if !strings.Contains(err.Error(), "GET: no state store answered") {
		t.Errorf("message %q", err)
	}
}

// A PUBACK refusing the request ends the call at once with a
// *BrokerError, not a timeout.
func TestPubackRefusalIsABrokerError(t *testing.T) {
	// Anonymous clients may receive (responses, notifications) but not
	// publish requests: mosquitto answers 0x87 (not authorized).
	b := brokertest.StartWithACL(t, "topic read #\n")
	cfg := testConfig(t, b.URL())
	cfg.Timeout = time.Minute
	c := dialConfig(t, cfg)

	_, _, err := c.Get(context.Background(), []byte("k"))
	var be *runtime.BrokerError
	if !errors.As(err, &be) || be.Packet != "PUBACK" || be.ReasonCode != 0x87 || !errors.Is(err, runtime.ErrNotAuthorized) {
		t.Fatalf("Get: %v, want a PUBACK 0x87 BrokerError matching ErrNotAuthorized", err)
	}
	var te *runtime.TimeoutError
	if errors.As(err, &te) {
		t.Fatalf("Get: %v is a timeout", err)
	}
	if s := c.Stats(); s.InFlight != 0 || s.Errors != 1 {
		t.Errorf("Stats = %+v, want one error and nothing in flight", s)
	}
}

// A request under a context that has already ended is not sent: it fails
// with the context's error (a deadline as a *TimeoutError), and the
// connection, free to send, carries nothing.
func TestEndedContextSendsNothing(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		canceled, cancel := context.WithCancel(testCtx(t))
		cancel()
		expired, cancel2 := context.WithDeadline(testCtx(t), time.Now().Add(-time.Second))
		defer cancel2()
		before := c.Stats().Requests
		if _, _, err := c.Get(canceled, []byte("k")); !errors.Is(err, context.Canceled) {
			t.Errorf("GET under a canceled context: %v", err)
		}
		var te *runtime.TimeoutError
		if _, err := c.Set(expired, []byte("k"), []byte("v"), runtime.SetOptions{}); !errors.As(err, &te) {
			t.Errorf("SET under an expired deadline: %v, want a *TimeoutError", err)
		}
		if n := c.Stats().Requests - before; n != 0 {
			t.Errorf("%d requests sent under ended contexts", n)
		}
	})
}
