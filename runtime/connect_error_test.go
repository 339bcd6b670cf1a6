package runtime_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/servertest"
)

// retryCounter counts Dial's "connect failed, retrying" log records: the
// number of attempts Dial made after the first.
type retryCounter struct{ n atomic.Int64 }

func (r *retryCounter) Enabled(context.Context, slog.Level) bool { return true }
func (r *retryCounter) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message == "connect failed, retrying" {
		r.n.Add(1)
	}
	return nil
}
func (r *retryCounter) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *retryCounter) WithGroup(string) slog.Handler      { return r }

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// dialOnce dials url with DialOnce and a connect timeout far longer than
// the test may take, so that a retried failure would show as a context
// error instead of the attempt's own, and counts the retries.
func dialOnce(t *testing.T, url string, once bool, edit func(*runtime.Config)) (retries int64, err error) {
	t.Helper()
	cfg, err := runtime.FromURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rc := &retryCounter{}
	cfg.Logger = slog.New(rc)
	cfg.DialOnce = once
	cfg.ConnectTimeout = time.Hour
	if !once {
		cfg.ConnectTimeout = 300 * time.Millisecond
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, cfg)
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("Dial waited for the context: %v", err)
	}
	return rc.n.Load(), err
}

func TestDialOnceReturnsARefusalAtOnce(t *testing.T) {
	addr := closedPort(t)
	retries, err := dialOnce(t, "mqtt://"+addr, true, nil)
	var ce *runtime.ConnectError
	if !errors.As(err, &ce) || !ce.Refused() || ce.Stage != runtime.StageTCP || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Dial: %v, want a refused *ConnectError", err)
	}
	if retries != 0 {
		t.Errorf("retried %d times", retries)
	}
	if got, want := err.Error(), "statestore: connect "+addr+": connection refused"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}

	// Without DialOnce a refusal is retried until ConnectTimeout, as a
	// service starting before its broker wants.
	if retries, _ := dialOnce(t, "mqtt://"+addr, false, nil); retries == 0 {
		t.Error("without DialOnce Dial did not retry")
	}
}

func TestConnectErrorTellsATLSMismatch(t *testing.T) {
	srv := servertest.New(t)
	// TLS to a plain MQTT listener: the broker closes the connection
	// during the handshake.
	_, err := dialOnce(t, "mqtts://"+srv.Addr(), true, nil)
	var ce *runtime.ConnectError
	if !errors.As(err, &ce) || ce.Stage != runtime.StageTLS || !ce.ClosedByBroker() || !ce.TLS {
		t.Fatalf("TLS to plain: %v (%#v)", err, ce)
	}
	if want := "statestore: connect " + srv.Addr() + ": TLS handshake: the broker closed the connection"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}

	// Plain MQTT to a TLS listener: it closes the connection before any
	// CONNACK.
	pki := coreNewPKI(t, "127.0.0.1")
	port := coreTLSProxy(t, pki, srv.Addr())
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err = dialOnce(t, "mqtt://"+addr, true, nil)
	if !errors.As(err, &ce) || ce.Stage != runtime.StageMQTT || !ce.ClosedByBroker() || ce.TLS {
		t.Fatalf("plain to TLS: %v (%#v)", err, ce)
	}
	if want := "statestore: connect " + addr + ": MQTT CONNECT: the broker closed the connection"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// Every error carries this package's prefix once, however many of its
// errors it wraps.
func TestErrorMessagesCarryOnePrefix(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx := testCtx(t)
	var errs []error

	_, refused := dialOnce(t, "mqtt://"+closedPort(t), true, nil)
	errs = append(errs, refused)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err := c.Get(cancelled, []byte("k"))
	errs = append(errs, err)

	if _, err := c.Set(ctx, []byte("fenced"), []byte("v"), runtime.SetOptions{FencingToken: hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "n"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Set(ctx, []byte("fenced"), []byte("v"), runtime.SetOptions{})
	errs = append(errs, err)

	_, _, err = c.Get(ctx, []byte("absent"))
	errs = append(errs, err)

	errs = append(errs,
		&runtime.LeaseLostError{Lock: "l", Cause: runtime.ErrLeaseExpired},
		&runtime.ProtocolError{Op: "get", Reason: "response __ts", Err: runtime.ErrInvalidVersion},
		&runtime.ConnectError{Addr: "h:1", Stage: runtime.StageSubscribe, Err: &runtime.BrokerError{Packet: "SUBACK", ReasonCode: 0x87}},
	)
	for _, err := range errs {
		if err == nil {
			t.Fatal("an operation that should fail succeeded")
		}
		if n := strings.Count(err.Error(), "statestore:"); n != 1 || !strings.HasPrefix(err.Error(), "statestore: ") {
			t.Errorf("%q: want one leading \"statestore: \"", err)
		}
	}
}
