package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/servertest"
)

// The broker comes from --broker, else $SSGEN_BROKER, else the AIO_*
// variables, else mqtt://127.0.0.1:1883; a scheme-less host:port is plain
// MQTT.
func TestBrokerResolution(t *testing.T) {
	aio := map[string]string{"AIO_BROKER_HOSTNAME": "aio.example", "AIO_BROKER_TCP_PORT": "8884"}
	t.Setenv("AIO_BROKER_HOSTNAME", "aio.example") // runtime.FromEnv reads the process environment
	t.Setenv("AIO_BROKER_TCP_PORT", "8884")
	tests := []struct {
		name    string
		flag    string
		environ map[string]string
		host    string
		port    int
		tls     bool
	}{
		{"default", "", nil, "127.0.0.1", 1883, false},
		{"host:port", "broker.example:1999", nil, "broker.example", 1999, false},
		{"bare host", "broker.example", nil, "broker.example", 1883, false},
		{"URL", "mqtts://broker.example", nil, "broker.example", 8883, true},
		{"SSGEN_BROKER", "", map[string]string{"SSGEN_BROKER": "env.example:2000"}, "env.example", 2000, false},
		{"--broker beats SSGEN_BROKER", "flag.example:1", map[string]string{"SSGEN_BROKER": "env.example:2000"}, "flag.example", 1, false},
		{"SSGEN_BROKER beats AIO", "", map[string]string{"SSGEN_BROKER": "env.example:2000", "AIO_BROKER_HOSTNAME": "aio.example"}, "env.example", 2000, false},
		{"AIO", "", aio, "aio.example", 8884, true},
	}
	for _, tt := range tests {
		env := &cliEnv{getenv: func(k string) string { return tt.environ[k] }}
		c := connFlags{broker: tt.flag, timeout: runtime.DefaultTimeout}
		cfg, err := c.config(env, true)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if cfg.Host != tt.host || cfg.Port != tt.port || cfg.TLS != tt.tls || !cfg.DialOnce {
			t.Errorf("%s: %s:%d tls %v dialOnce %v, want %s:%d tls %v", tt.name, cfg.Host, cfg.Port, cfg.TLS, cfg.DialOnce, tt.host, tt.port, tt.tls)
		}
	}

	// And for real: host:port without a scheme, and $SSGEN_BROKER.
	url := testStore(t)
	hostPort := strings.TrimPrefix(url, "mqtt://")
	runIn(t, "", nil, "set", "--broker", hostPort, "k", "v").want(t, exitOK, nil)
	runIn(t, "", map[string]string{"SSGEN_BROKER": hostPort}, "get", "k").want(t, exitOK, ptr("v\n"))
}

// A refused connection fails at once with what to try. --timeout is an
// hour: had the verb waited for it, the test's own 20 s deadline would
// have cut it short with another message.
func TestRefusedConnectionFailsAtOnceSayingWhatToTry(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, args := range [][]string{
		{"get", "k"}, {"set", "k", "v"}, {"del", "k"}, {"vdel", "k", "v"}, {"watch", "k"}, {"keys"},
		{"lock", "n", "--ttl", "1s", "--", "true"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			r := runIn(t, "", nil, append([]string{args[0], "--broker", addr, "--timeout", "1h"}, args[1:]...)...)
			r.want(t, exitUsage, ptr(""))
			want := "ssgen " + args[0] + ": connect " + addr + ": connection refused (broker from --broker): is the broker running, and listening on that port?\n"
			if r.stderr != want {
				t.Errorf("stderr %q, want %q", r.stderr, want)
			}
		})
	}
}

// With nothing set, the default broker is tried, and its refusal says how
// to get one.
func TestRefusedDefaultBrokerSaysHowToStartOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := runtime.Config{Host: "127.0.0.1", Port: port, DialOnce: true}
	_, derr := runtime.Dial(context.Background(), cfg)
	msg := connectError(cfg, "", derr).Error()
	for _, want := range []string{"connection refused", "nothing named a broker", defaultBroker, "ssgen serve", "--broker HOST:PORT"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
}

// A TLS client at a plain listener, and a plain client at a TLS one, fail
// at once and say which scheme to use.
func TestTLSMismatchFailsAtOnceSayingWhatToTry(t *testing.T) {
	_, srvPair, _ := testPKI(t)
	tlsSrv := servertest.New(t, servertest.WithOptions(func(o *server.Options) {
		tc, err := server.LoadTLS(srvPair.cert, srvPair.key, "")
		if err != nil {
			t.Fatal(err)
		}
		o.Security.TLS = tc
	}))
	plain := servertest.New(t)

	r := runIn(t, "", nil, "get", "--broker", tlsSrv.Addr(), "--timeout", "1h", "k")
	r.want(t, exitUsage, ptr(""))
	if want := "MQTT CONNECT: the broker closed the connection; if the broker expects TLS on that port, connect with mqtts://" + tlsSrv.Addr(); !strings.Contains(r.stderr, want) {
		t.Errorf("plain to TLS: %q, want it to say %q", r.stderr, want)
	}
	r = runIn(t, "", nil, "get", "--broker", "mqtts://"+plain.Addr(), "--timeout", "1h", "k")
	r.want(t, exitUsage, ptr(""))
	if want := "TLS handshake: the broker closed the connection; if the broker does not use TLS on that port, connect with mqtt://" + plain.Addr(); !strings.Contains(r.stderr, want) {
		t.Errorf("TLS to plain: %q, want it to say %q", r.stderr, want)
	}
}

// Errors carry one prefix: the verb's, not also the runtime's or the
// server's.
func TestErrorsCarryOnePrefix(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "fenced", "v", "--fencing-token", "001795315577412:00000:n").want(t, exitOK, nil)
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	writeTestFile(t, notADir, []byte("x"))
	tests := [][]string{
		withBroker(url, []string{"get", "absent"}),
		withBroker(url, []string{"set", "fenced", "v"}),
		withBroker(url, []string{"del", "fenced"}),
		withBroker(url, []string{"lock", "n", "--ttl", "0s", "--", "true"}),
		{"get", "--broker", "mqtt://" + refusedAddr(t), "--timeout", "1h", "k"},
		{"get", "--broker", "ftp://x", "k"},
		{"serve", "--listen", "127.0.0.1:0", "--tls-cert", "x"},
		{"serve", "--listen", "127.0.0.1:0", "--authz-file", filepath.Join(dir, "none")},
		{"serve", "--listen", "127.0.0.1:0", "--password-file", filepath.Join(dir, "none")},
		{"serve", "--listen", "127.0.0.1:0", "--data-dir", notADir},
		{"serve", "--listen", "127.0.0.1:0", "--max-inflight", "70000"},
	}
	for _, args := range tests {
		r := runIn(t, "", nil, args...)
		if r.code == exitOK {
			t.Errorf("%q succeeded", args)
			continue
		}
		line := strings.TrimSuffix(r.stderr, "\n")
		if strings.Contains(line, "\n") || !strings.HasPrefix(line, "ssgen "+args[0]+": ") {
			t.Errorf("%q: stderr %q, want one line starting \"ssgen %s: \"", args, r.stderr, args[0])
		}
		for _, other := range []string{"statestore:", "server:", "ssgen " + args[0] + ": " + args[0] + ":"} {
			if strings.Contains(line, other) {
				t.Errorf("%q: %q carries a second prefix %q", args, line, other)
			}
		}
	}
	_ = os.Remove(notADir)
}

// TestShellVerbsTrustACAFile: with mqtts:// a verb trusts --ca-file (or
// $AIO_TLS_CA_FILE), and without it says how to.
func TestShellVerbsTrustACAFile(t *testing.T) {
	caFile, srvPair, _ := testPKI(t)
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--tls-cert", srvPair.cert, "--tls-key", srvPair.key)
	if !sp.lines.Scan() {
		t.Fatalf("no URL; stderr:\n%s", sp.stderr)
	}
	url := sp.lines.Text()
	untrusted := run(t, url, "get", "k")
	untrusted.want(t, exitUsage, ptr(""))
	if !strings.Contains(untrusted.stderr, "--ca-file") {
		t.Errorf("stderr %q does not name --ca-file", untrusted.stderr)
	}
	run(t, url, "set", "k", "v", "--ca-file", caFile).want(t, exitOK, nil)
	runIn(t, "", map[string]string{"AIO_TLS_CA_FILE": caFile}, "get", "--broker", url, "k").want(t, exitOK, ptr("v\n"))
	run(t, "mqtt://127.0.0.1:1", "get", "k", "--ca-file", caFile).want(t, exitUsage, ptr(""))
}

// TestShellVerbsSayAnHTTPPortIsNotMQTT: a verb pointed at the console's
// HTTP port says so, not paho's parse error.
func TestShellVerbsSayAnHTTPPortIsNotMQTT(t *testing.T) {
	_, consoleURL := startServe(t, "--ui")
	host := strings.TrimSuffix(strings.TrimPrefix(consoleURL, "http://"), "/")
	for _, broker := range []string{host, "mqtts://" + host, consoleURL} {
		r := runIn(t, "", nil, "get", "--broker", broker, "k")
		r.want(t, exitUsage, ptr(""))
		if !strings.Contains(r.stderr, "speaks HTTP, not MQTT") || strings.Contains(r.stderr, "Prop type") {
			t.Errorf("%s: stderr %q", broker, r.stderr)
		}
	}
}
