package console_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
)

// TestSchemaViolationMetrics: a SET the write check finds at fault is
// counted by declaration, reason and action, refused or warned; the
// runtime matches the refusal to runtime.ErrSchemaViolation.
func TestSchemaViolationMetrics(t *testing.T) {
	check := func(key, value []byte) *server.WriteProblem {
		if strings.HasPrefix(string(key), "typed/") && string(value) != "ok" {
			return &server.WriteProblem{Declaration: "Typed", Path: ".v", Reason: "decode", Msg: "not ok"}
		}
		return nil
	}
	for _, mode := range []server.Enforce{server.EnforceWarn, server.EnforceRefuse} {
		e := newEnv(t, console.Options{}, func(so *server.Options) { so.Enforce, so.WriteCheck = mode, check })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cfg, err := runtime.FromURL(e.srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		c, err := runtime.Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_, err = c.Set(ctx, []byte("typed/a"), []byte("bad"), runtime.SetOptions{})
		action := "warned"
		if mode == server.EnforceRefuse {
			action = "refused"
			var se *runtime.ServiceError
			if !errors.Is(err, runtime.ErrSchemaViolation) || !errors.As(err, &se) || se.Text != "schema violation: Typed .v: not ok" {
				t.Fatalf("refused Set: %v", err)
			}
		} else if err != nil {
			t.Fatalf("warned Set: %v", err)
		}
		if _, err := c.Set(ctx, []byte("typed/a"), []byte("ok"), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		want := `ssgen_schema_violations_total{action="` + action + `",declaration="Typed",reason="decode"} 1`
		waitFor(t, "the violation counted", func() bool {
			_, body, _ := e.do("GET", "/metrics", "")
			return strings.Contains(body, want)
		})
	}
}
