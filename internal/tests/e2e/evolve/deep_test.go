package evolve_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	v2 "github.com/ssgen/ssgen/internal/tests/e2e/evolve/v2"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/server/servertest"
)

// Issue #27: a recursive value stored three million levels deep (21 MB,
// under the packet limit) overflowed the stack of the generated Get,
// killing the reader. It now fails with codec.ErrTooDeep.
func TestGeneratedGetRefusesADeepValue(t *testing.T) {
	srv := servertest.New(t)
	c := dial(t, srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deep := append(bytes.Repeat([]byte("\x81\xa4kids\x91"), 3_000_000), 0x80)
	if _, err := c.Set(ctx, []byte("evolve/tree"), deep, runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := v2.New(c).Tree().Get(ctx)
	if !errors.Is(err, codec.ErrTooDeep) || !errors.Is(err, codec.ErrDecode) {
		t.Fatalf("Get: %v, want codec.ErrTooDeep", err)
	}
}
