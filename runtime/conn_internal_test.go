package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestConnectPacketRereadsSecretsAndResumesTheSession(t *testing.T) {
	dir := t.TempDir()
	sat := filepath.Join(dir, "token")
	pw := filepath.Join(dir, "password")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(sat, "token-1\n")
	write(pw, "secret-1")
	cfg, err := Config{
		Host: "h", ClientID: "me", Username: "user", PasswordFile: pw, SATFile: sat,
		CleanStart: true, KeepAlive: 45 * time.Second, SessionExpiry: 2 * time.Hour,
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{cfg: cfg}

	first, err := c.connectPacket(true)
	if err != nil {
		t.Fatal(err)
	}
	if !first.CleanStart || first.KeepAlive != 45 || *first.Properties.SessionExpiryInterval != 7200 ||
		*first.Properties.ReceiveMaximum != 65535 || first.ClientID != "me" {
		t.Errorf("first CONNECT %+v %+v", first, first.Properties)
	}
	if first.Properties.AuthMethod != "K8S-SAT" || string(first.Properties.AuthData) != "token-1" {
		t.Errorf("auth %q %q", first.Properties.AuthMethod, first.Properties.AuthData)
	}
	if !first.UsernameFlag || first.Username != "user" || !first.PasswordFlag || string(first.Password) != "secret-1" {
		t.Errorf("credentials %q %q", first.Username, first.Password)
	}

	write(sat, "token-2")
	write(pw, "secret-2")
	again, err := c.connectPacket(false)
	if err != nil {
		t.Fatal(err)
	}
	if again.CleanStart {
		t.Error("a reconnection asked for a clean start")
	}
	if string(again.Properties.AuthData) != "token-2" || string(again.Password) != "secret-2" {
		t.Errorf("rotated secrets not re-read: %q %q", again.Properties.AuthData, again.Password)
	}

	if err := os.Remove(sat); err != nil {
		t.Fatal(err)
	}
	if _, err := c.connectPacket(false); !errors.Is(err, ErrInvalidArgument) || retryableConnectError(err) {
		t.Errorf("missing token file: %v", err)
	}
}

func TestNoSessionExpiryMeansZero(t *testing.T) {
	cfg, err := Config{Host: "h", SessionExpiry: -1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := (&Client{cfg: cfg}).connectPacket(true)
	if err != nil {
		t.Fatal(err)
	}
	if *cp.Properties.SessionExpiryInterval != 0 || cp.UsernameFlag || cp.PasswordFlag || cp.Properties.AuthMethod != "" {
		t.Errorf("CONNECT %+v %+v", cp, cp.Properties)
	}
}

func TestConnectErrorsThatRetryingCannotFix(t *testing.T) {
	for code, retry := range map[byte]bool{0x86: false, 0x87: false, 0x85: false, 0x8C: false, 0x88: true, 0x89: true, 0x97: true} {
		if got := retryableConnectError(&BrokerError{Packet: "CONNACK", ReasonCode: code}); got != retry {
			t.Errorf("CONNACK 0x%02X retryable = %v, want %v", code, got, retry)
		}
	}
	if !retryableConnectError(errors.New("connection refused")) {
		t.Error("a network error is not retryable")
	}
}
