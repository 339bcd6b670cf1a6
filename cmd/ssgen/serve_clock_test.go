package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
)

func TestClockVerbMovesAManualClock(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	const token = "clock-token-0123456789"
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	mqttURL, consoleURL := startServe(t, "--clock", "manual", "--http", "127.0.0.1:0", "--http-auth", "token", "--http-token-file", tokenFile)
	if code, _, errs := runVerb(t, "", "set", "--broker", mqttURL, "--raw", "--px", "10s", "reading", "21.5"); code != 0 {
		t.Fatalf("set: %d %q", code, errs)
	}
	code, out, errs := runVerb(t, "", "clock", "--http", consoleURL, "--token", token)
	if code != 0 || !strings.HasSuffix(out, " (manual clock)\n") {
		t.Fatalf("clock: %d %q %q", code, out, errs)
	}
	start, err := time.Parse(time.RFC3339Nano, strings.Fields(out)[0])
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runVerb(t, "", "clock", "--http", consoleURL, "--token", token, "advance", "11s")
	if code != 0 || !strings.HasPrefix(out, start.Add(11*time.Second).Format(time.RFC3339Nano)+" ") {
		t.Fatalf("clock advance 11s from %v: %d %q %q", start, code, out, errs)
	}
	if code, out, errs := runVerb(t, "", "get", "--broker", mqttURL, "--raw", "reading"); code != exitNegative {
		t.Fatalf("get after the advance: %d %q %q, want not found", code, out, errs)
	}
	// Backwards: refused, exit 1, the clock stays.
	code, _, errs = runVerb(t, "", "clock", "--http", consoleURL, "--token", token, "set", start.Format(time.RFC3339Nano))
	if code != exitNegative || !strings.Contains(errs, "only moves forward") {
		t.Fatalf("clock set back: %d %q", code, errs)
	}
	// The same authentication as export and import.
	if code, _, errs := runVerb(t, "", "clock", "--http", consoleURL, "advance", "1s"); code != exitUsage || !strings.Contains(errs, "401") {
		t.Fatalf("clock without the token: %d %q", code, errs)
	}
	later := start.Add(time.Hour).UTC().Format(time.RFC3339)
	code, out, errs = runVerb(t, "", "clock", "--http", consoleURL, "--token", token, "set", later)
	if code != 0 || !strings.HasPrefix(out, later+" ") {
		t.Fatalf("clock set %s: %d %q %q", later, code, out, errs)
	}
	// now is before the clock now: refused like any move back.
	if code, _, errs := runVerb(t, "", "clock", "--http", consoleURL, "--token", token, "set", "now"); code != exitNegative {
		t.Fatalf("clock set now, an hour back: %d %q", code, errs)
	}
}

func TestClockVerbOnARealClock(t *testing.T) {
	_, consoleURL := startServe(t, "--ui")
	if code, out, errs := runVerb(t, "", "clock", "--http", consoleURL); code != 0 || !strings.HasSuffix(out, " (real clock)\n") {
		t.Fatalf("clock: %d %q %q", code, out, errs)
	}
	if code, _, errs := runVerb(t, "", "clock", "--http", consoleURL, "advance", "1s"); code != exitNegative || !strings.Contains(errs, "--clock manual") {
		t.Fatalf("clock advance on real time: %d %q", code, errs)
	}
}

func TestClockVerbUsage(t *testing.T) {
	for _, args := range [][]string{
		{"clock"},
		{"clock", "--http", "127.0.0.1:1", "advance"},
		{"clock", "--http", "127.0.0.1:1", "advance", "soon"},
		{"clock", "--http", "127.0.0.1:1", "set", "tomorrow"},
		{"clock", "--http", "127.0.0.1:1", "rewind", "1s"},
		{"serve", "--clock", "fast"},
		{"serve", "--clock", "manual"},
		{"serve", "--clock", "manual", "--ui", "--data-dir", "x"},
		{"serve", "--fault-injection", "--broker", "mqtt://127.0.0.1:1"},
	} {
		if code, _, errs := runVerb(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr %q", args, code, exitUsage, errs)
		}
	}
}

// connackWith connects to the server at mqttURL with the CONNECT user
// property fault:rejectconnect=137 and returns the CONNACK's code.
func connackWith(t *testing.T, mqttURL string) byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(mqttURL, "mqtt://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{ClientID: "fault-cli", Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ca, err := c.Connect(ctx, &paho.Connect{ClientID: "fault-cli", CleanStart: true, Properties: &paho.ConnectProperties{
		User: paho.UserProperties{{Key: protocol.FaultRejectConnect, Value: "137"}},
	}})
	if ca == nil {
		t.Fatalf("no CONNACK: %v", err)
	}
	if err == nil {
		_ = c.Disconnect(&paho.Disconnect{})
	}
	return ca.ReasonCode
}

func TestServeFaultInjection(t *testing.T) {
	on, _ := startServe(t, "--fault-injection", "--ui")
	if code := connackWith(t, on); code != 0x89 {
		t.Fatalf("with --fault-injection: CONNACK 0x%02X, want 0x89", code)
	}
	off, _ := startServe(t, "--ui")
	if code := connackWith(t, off); code != 0 {
		t.Fatalf("without --fault-injection: CONNACK 0x%02X, want 0", code)
	}
}

// Review of #30, F10: serve says at startup that it is not behaving like
// the real service (fault injection, a manual clock, chaos rules), and
// --fault-injection with --broker names what to do instead.
func TestServeLogsFailureTestingAtStartup(t *testing.T) {
	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--ui", "--fault-injection", "--clock", "manual", "--chaos-api")
	for range 2 {
		if !sp.lines.Scan() {
			t.Fatalf("serve printed too little; stderr:\n%s", sp.stderr)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, sp.out) }()
	testwait.Until(t, 5*time.Second, "the startup warnings", func() bool {
		log := sp.stderr.String()
		return strings.Contains(log, `msg="fault injection on`) && strings.Contains(log, `msg="manual clock`) && strings.Contains(log, `msg="chaos API on`)
	})
	plain := backgroundServe(t, "serve", "--listen", "127.0.0.1:0")
	if !plain.lines.Scan() {
		t.Fatalf("serve printed nothing; stderr:\n%s", plain.stderr)
	}
	plain.stop()
	if log := plain.stderr.String(); strings.Contains(log, "fault injection") || strings.Contains(log, "manual clock") || strings.Contains(log, "chaos rules") {
		t.Fatalf("warnings without the flags:\n%s", log)
	}
	code, _, errs := runVerb(t, "", "serve", "--broker", "mqtt://127.0.0.1:1", "--fault-injection")
	if code != exitUsage || !strings.Contains(errs, "drop --broker") || !strings.Contains(errs, "--chaos") {
		t.Fatalf("--fault-injection --broker: %d %q", code, errs)
	}
}
