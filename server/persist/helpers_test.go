package persist_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/ssgen/ssgen/runtime/hlc"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func mustHLC(t *testing.T, s string) hlc.HLC {
	t.Helper()
	h, err := hlc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
