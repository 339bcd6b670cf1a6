package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

var (
	embeddedOnce sync.Once
	embeddedErr  error
)

// testStore starts a state store for one test and returns its broker URL:
// the embedded server, or the server attached to mosquitto while the
// embedded one cannot answer the runtime (checked once per run). The
// runtime sends Request Problem Information 0, after which mochi v2.7.9
// strips the user properties (__stat) from every PUBLISH to that client.
func testStore(t *testing.T) string {
	t.Helper()
	srv := servertest.New(t)
	embeddedOnce.Do(func() { embeddedErr = probe(srv.URL()) })
	if embeddedErr == nil {
		return srv.URL()
	}
	t.Logf("embedded server does not answer the runtime (%v); using mosquitto", embeddedErr)
	url := brokertest.Mosquitto(t)
	servertest.NewExternal(t, url)
	return url
}

func probe(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg, err := runtime.FromURL(url)
	if err != nil {
		return err
	}
	cfg.Timeout = 2 * time.Second
	c, err := runtime.Dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, _, err := c.Get(ctx, []byte("probe")); !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	return nil
}
