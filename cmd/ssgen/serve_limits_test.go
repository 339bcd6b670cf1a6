package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"

	"github.com/ssgen/ssgen/runtime"
)

// The connection limit flags reach the server: with --max-conns-per-ip 1
// a second connection from the same address is answered CONNACK 0x97,
// and --max-session-expiry is announced in CONNACK.
func TestServeConnectionAndSessionLimitFlags(t *testing.T) {
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--max-conns-per-ip", "1",
		"--max-session-expiry", "2m", "--connect-timeout", "5s", "--max-connect-bytes", "4096",
		"--max-sessions", "10", "--max-client-output-bytes", "1048576", "--max-conns", "100")
	lines := sp.lines
	if !lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	u, err := url.Parse(lines.Text())
	if err != nil {
		t.Fatal(err)
	}
	connect := func(id string) *packets.Connack {
		conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		expiry := uint32(0xFFFFFFFF)
		cp := packets.NewControlPacket(packets.CONNECT).Content.(*packets.Connect)
		cp.ProtocolName, cp.ProtocolVersion, cp.ClientID, cp.KeepAlive = "MQTT", 5, id, 30
		cp.Properties = &packets.Properties{SessionExpiryInterval: &expiry}
		if _, err := cp.WriteTo(conn); err != nil {
			t.Fatal(err)
		}
		pk, err := packets.ReadPacket(conn)
		if err != nil || pk.Type != packets.CONNACK {
			t.Fatalf("%s: %v %v", id, pk, err)
		}
		return pk.Content.(*packets.Connack)
	}
	ca := connect("first")
	if ca.ReasonCode != 0 || ca.Properties.SessionExpiryInterval == nil || *ca.Properties.SessionExpiryInterval != 120 {
		t.Fatalf("first: CONNACK 0x%02x, properties %+v", ca.ReasonCode, ca.Properties)
	}
	if ca := connect("second"); ca.ReasonCode != 0x97 {
		t.Fatalf("second connection from one address: CONNACK 0x%02x, want 0x97", ca.ReasonCode)
	}
	sp.stop()
}

func TestServeRejectsBadConnectionLimitFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--max-conns", "-1"},
		{"serve", "--listen", "127.0.0.1:0", "--connect-timeout", "-1s"},
		{"serve", "--listen", "127.0.0.1:0", "--max-client-output-bytes", "-5"},
		{"serve", "--broker", "mqtt://127.0.0.1:1", "--max-sessions", "10"},
		{"serve", "--broker", "mqtt://127.0.0.1:1", "--max-conns-per-ip", "10"},
	} {
		var stderr serveLog
		env := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
		if code := runCLI(context.Background(), env, args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, stderr.String())
		}
	}
}

// The watch byte quotas reach the server (issue #25): with
// --max-watch-bytes 8 a client may watch 8 bytes of keys, and with
// --max-watches-total 2 the server holds two registrations in all.
func TestServeWatchByteAndTotalFlags(t *testing.T) {
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0",
		"--max-watch-bytes", "8", "--max-watches-total", "2", "--max-watch-bytes-total", "100")
	lines := sp.lines
	if !lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	dial := func(id string) *runtime.Client {
		cfg, err := runtime.FromURL(lines.Text())
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientID = id
		c, err := runtime.Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a, b := dial("watch-a"), dial("watch-b")
	if err := a.KeyNotify(ctx, []byte("1234")); err != nil {
		t.Fatal(err)
	}
	if err := a.KeyNotify(ctx, []byte("56789")); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("9 bytes of keys: %v, want ErrQuotaExceeded", err)
	}
	if err := b.KeyNotify(ctx, []byte("56789")); err != nil {
		t.Fatal(err)
	}
	if err := b.KeyNotify(ctx, []byte("x")); !errors.Is(err, runtime.ErrQuotaExceeded) {
		t.Fatalf("a third registration: %v, want ErrQuotaExceeded", err)
	}
	sp.stop()
}
