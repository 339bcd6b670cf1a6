package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// TestMochiLog feeds the broker's records through mochiLog, as mochi
// writes them, and checks the level and message each comes out with.
func TestMochiLog(t *testing.T) {
	ended := func(err error) []any { return []any{"error", err} }
	cases := []struct {
		level slog.Level
		msg   string
		attrs []any
		want  string // "LEVEL msg", or "" when not passed on at Debug
	}{
		{slog.LevelInfo, "added hook", []any{"hook", "x"}, "DEBUG added hook"},
		{slog.LevelDebug, "client disconnected", nil, "DEBUG client disconnected"},
		{slog.LevelWarn, "", ended(io.EOF), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(fmt.Errorf("read connection: %w", io.EOF)), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(net.ErrClosed), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(os.ErrDeadlineExceeded), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.CodeDisconnect), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrBadUsernameOrPassword), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrNotAuthorized), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrQuotaExceeded), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrServerShuttingDown), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrSessionTakenOver), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrKeepAliveTimeout), "DEBUG connection ended"},
		{slog.LevelWarn, "", ended(fmt.Errorf("read connection: %w", packets.ErrProtocolViolationRequireFirstConnect)), "INFO connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrMalformedPacket), "INFO connection ended"},
		{slog.LevelWarn, "", ended(packets.ErrPacketTooLarge), "INFO connection ended"},
		{slog.LevelWarn, "", ended(errors.New("remote error: tls: bad certificate")), "INFO connection ended"},
		{slog.LevelWarn, "", nil, "DEBUG connection ended"},
		{slog.LevelWarn, "error processing packet", []any{"error", packets.ErrProtocolViolation}, "INFO error processing packet"},
		{slog.LevelWarn, mqtt.ErrMinimumKeepalive.Error(), []any{"keepalive", 0}, "DEBUG " + mqtt.ErrMinimumKeepalive.Error()},
		{slog.LevelWarn, "client store quota reached", nil, "WARN client store quota reached"},
		{slog.LevelError, "publish packet error", nil, "ERROR publish packet error"},
	}
	for _, tc := range cases {
		var b bytes.Buffer
		log := slog.New(mochiLog{slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime})})
		log.Log(context.Background(), tc.level, tc.msg, tc.attrs...)
		got := b.String()
		if !strings.HasPrefix(got, "level="+strings.Fields(tc.want)[0]+" msg=") || !strings.Contains(got, strings.SplitN(tc.want, " ", 2)[1]) {
			t.Errorf("%v %q %v: logged %q, want %q", tc.level, tc.msg, tc.attrs, got, tc.want)
		}
		if strings.Contains(got, `msg=""`) {
			t.Errorf("an empty message: %q", got)
		}
	}
}

func noTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestMochiLogAtInfo: what mochiLog lowers to Debug is not written when
// the service logs at Info, and Enabled says so before mochi builds it.
func TestMochiLogAtInfo(t *testing.T) {
	var b bytes.Buffer
	h := mochiLog{slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo})}
	if h.Enabled(context.Background(), slog.LevelInfo) || h.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("mochi's Info and Debug records are built at --log-level info")
	}
	log := slog.New(h).With("component", "mochi")
	log.Warn("", "error", io.EOF)
	log.Info("mochi mqtt starting")
	if b.Len() != 0 {
		t.Errorf("logged at info: %q", b.String())
	}
	log.Warn("", "error", packets.ErrMalformedPacket)
	if !strings.Contains(b.String(), "level=INFO msg=\"connection ended\" component=mochi error=") {
		t.Errorf("logged %q", b.String())
	}
}

// TestMochiLogShowsPacketsByType: mochi passes whole packets (payload
// included) as attributes; the log shows their type.
func TestMochiLogShowsPacketsByType(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(mochiLog{slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})})
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish}, TopicName: "t", Payload: []byte("secret value")}
	log.Warn("error processing packet", "error", packets.ErrProtocolViolation, "pk", pk)
	if s := b.String(); strings.Contains(s, "secret") || !strings.Contains(s, `"pk":"Publish"`) {
		t.Errorf("logged %s", s)
	}
}
