package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/console"
)

// ConsoleResult compares, in one run, the state store with its web
// console serving and no live stream open (the report's main figures),
// the same server with one live stream open as a browser keeps it
// (WithStream), and a second server without a console (NoConsole).
type ConsoleResult struct {
	URL        string   `json:"url"`
	WithStream Baseline `json:"with_stream"`
	NoConsole  Baseline `json:"no_console"`
	// StreamRatio is WithStream's ops/s over the main figures' (no stream
	// open); HooksRatio the main figures' over NoConsole's.
	StreamRatio float64 `json:"stream_ratio"`
	HooksRatio  float64 `json:"hooks_ratio"`
	// What the stream received: events (trace and key-change batches
	// count their records), bytes, and records it was told it lost.
	StreamRecords int64 `json:"stream_records"`
	StreamBytes   int64 `json:"stream_bytes"`
	StreamLost    int64 `json:"stream_lost"`
}

// withConsole installs a console into so (loopback, no authentication).
func withConsole(so *server.Options) (*console.Console, error) {
	return console.Install(so, console.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
}

// streamClient does what the console's page does while it is open: it
// reads the live stream (/events) to the end of every batch, refetches
// the first page of keys at most four times a second while keys change,
// and the clients every two seconds.
type streamClient struct {
	base                 string
	records, bytes, lost atomic.Int64
	keysChanged          atomic.Bool
}

// attach opens the stream and the page's polling; the returned function
// closes them and waits until they stopped.
func (s *streamClient) attach(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.read(ctx)
	}()
	go func() {
		defer wg.Done()
		keys := time.NewTicker(250 * time.Millisecond)
		clients := time.NewTicker(2 * time.Second)
		defer keys.Stop()
		defer clients.Stop()
		s.get(ctx, "/api/clients")
		for {
			select {
			case <-ctx.Done():
				return
			case <-keys.C:
				if s.keysChanged.Swap(false) {
					s.get(ctx, "/api/keys?limit=200")
				}
			case <-clients.C:
				s.get(ctx, "/api/clients")
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func (s *streamClient) get(ctx context.Context, path string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	s.bytes.Add(n)
}

func (s *streamClient) read(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/events", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	event := ""
	for sc.Scan() {
		line := sc.Bytes()
		s.bytes.Add(int64(len(line) + 1))
		switch {
		case len(line) > 7 && string(line[:7]) == "event: ":
			event = string(line[7:])
		case len(line) > 6 && string(line[:6]) == "data: ":
			data := string(line[6:])
			switch event {
			case "trace":
				s.records.Add(int64(strings.Count(data, `"seq":`)))
			case "keys":
				s.records.Add(int64(strings.Count(data, `"ref":`)))
				s.keysChanged.Store(true)
			case "lost":
				var tr, ks int64
				_, _ = fmt.Sscanf(data, `{"keys":%d,"trace":%d}`, &ks, &tr)
				s.lost.Add(tr + ks)
				s.keysChanged.Store(true)
			}
		}
	}
}
