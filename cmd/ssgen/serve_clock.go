package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ssgen/ssgen/server"
)

// clockPath is where a server's HTTP surface (ssgen serve --http) serves
// its clock.
const clockPath = "/api/clock"

func init() {
	register(verb{name: "clock", summary: "read or move the clock of a server started with --clock manual", run: runClock})
}

func runClock(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "clock", "--http URL [advance DURATION | set TIME|now] [flags]\n\n"+
		"Reads the state store's time from a running ssgen serve --http, or moves it\n"+
		"when the server runs with --clock manual: advance DURATION (30s, 1h30m)\n"+
		"moves it forward, set TIME (RFC 3339, or now for the real time) moves it to\n"+
		"TIME. Keys and lock leases that fall due expire before the command returns,\n"+
		"and versions follow the clock. The clock never moves back: a move to an\n"+
		"earlier time is refused (exit 1) and changes nothing. Prints the clock's\n"+
		"time (RFC 3339, UTC). Clients refuse versions more than their maximum drift\n"+
		"(one minute by default) ahead of their own clock (docs/testing.md).\n\nflags:")
	var hf httpFlags
	hf.register(fs)
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if err := hf.required(""); err != nil {
		return err
	}
	var move *server.ClockMove
	switch {
	case len(pos) == 0:
	case pos[0] == "advance" && len(pos) == 2:
		d, err := time.ParseDuration(pos[1])
		if err != nil {
			return usageErrorf("advance %q: want a duration such as 30s or 1h30m", pos[1])
		}
		if d < 0 {
			return usageErrorf("advance %s: the clock only moves forward", pos[1])
		}
		move = &server.ClockMove{Advance: pos[1]}
	case pos[0] == "set" && len(pos) == 2:
		if pos[1] != "now" {
			if _, err := time.Parse(time.RFC3339Nano, pos[1]); err != nil {
				return usageErrorf("set %q: want an RFC 3339 time such as 2026-11-27T15:04:05Z, or now", pos[1])
			}
		}
		move = &server.ClockMove{Set: pos[1]}
	case pos[0] == "advance" || pos[0] == "set":
		return usageErrorf("%s wants one argument", pos[0])
	default:
		return usageErrorf("unknown clock command %q: want advance DURATION or set TIME", pos[0])
	}
	method, contentType, body := http.MethodGet, "", io.Reader(nil)
	if move != nil {
		b, _ := json.Marshal(move)
		method, contentType, body = http.MethodPost, "application/json", bytes.NewReader(b)
	}
	resp, err := hf.call(ctx, env, method, clockPath, contentType, body)
	var refused *httpStatusError
	if errors.As(err, &refused) && refused.status == http.StatusConflict {
		// The server's condition, not the command's: a real clock, or a
		// move back in time.
		return &exitError{code: exitNegative, err: errors.New(refused.msg)}
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st server.ClockState
	if err := decodeAnswer(resp.Body, 4096, &st); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s (%s clock)\n", st.Now, st.Clock)
	return nil
}
