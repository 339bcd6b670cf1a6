package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"
)

// maxClockBody bounds a clock move's body.
const maxClockBody = 4 << 10

// ClockState is the answer of ClockHandler: which clock the server runs
// on and its reading.
type ClockState struct {
	// Clock is "manual" (Options.Clock) or "real".
	Clock string `json:"clock"`
	// Now is the state store's time, RFC 3339 with nanoseconds, UTC.
	Now string `json:"now"`
}

// ClockMove is the body of a POST to ClockHandler: exactly one of
// Advance (a Go duration such as "30s" or "1h30m", not negative) and Set
// (an RFC 3339 time, or "now" for the server's real time).
type ClockMove struct {
	Advance string `json:"advance,omitempty"`
	Set     string `json:"set,omitempty"`
}

// ClockHandler serves the server's clock over HTTP:
//
//   - GET (or HEAD): 200 with a ClockState as application/json;
//   - POST with Content-Type application/json and a ClockMove: moves the
//     manual clock (AdvanceClock, SetClock), expiring what fell due, and
//     answers 200 with the new ClockState; a refusal is answered with one
//     line of text/plain: 400 for a body that is not one valid move, 409
//     for a server on real time or a move back in time (the clock is left
//     as it was), 413 for a body over 4 KiB, 415 for another content type;
//   - anything else: 405.
//
// Like SnapshotHandler it authenticates nobody: mount it behind the
// authentication and cross-site request protection of the HTTP surface
// that serves it (the console's Handle). o.Caller, when set, decides who
// may move the clock (403 for the others; anyone may read it) and names
// the caller in the log.
func (s *Server) ClockHandler(o ControlHTTP) http.Handler { return clockHandler{s, o} }

type clockHandler struct {
	s *Server
	o ControlHTTP
}

func (h clockHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.answer(w, r, h.s.Now())
	case http.MethodPost:
		h.move(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: GET reads the clock, POST moves it")
	}
}

func (h clockHandler) answer(w http.ResponseWriter, r *http.Request, now time.Time) {
	st := ClockState{Clock: "real", Now: now.UTC().Format(time.RFC3339Nano)}
	if h.s.opts.Clock != nil {
		st.Clock = "manual"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(st)
	}
}

func (h clockHandler) move(w http.ResponseWriter, r *http.Request) {
	user, ok := h.o.caller(r)
	if !ok {
		h.s.log.Info("clock move refused", "user", user, "remote", r.RemoteAddr, "error", "not allowed")
		httpError(w, http.StatusForbidden, controlForbidden)
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, `a clock move is posted as Content-Type: application/json, {"advance":"30s"} or {"set":"TIME"}`)
		return
	}
	var m ClockMove
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxClockBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a clock move is at most %d bytes", maxClockBody))
			return
		}
		httpError(w, http.StatusBadRequest, `want {"advance":"DURATION"} or {"set":"TIME"}: `+err.Error())
		return
	}
	var now time.Time
	switch {
	case (m.Advance == "") == (m.Set == ""):
		httpError(w, http.StatusBadRequest, `want exactly one of {"advance":"DURATION"} and {"set":"TIME"}`)
		return
	case m.Advance != "":
		d, err := time.ParseDuration(m.Advance)
		if err != nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("advance %s: not a duration such as 30s or 1h30m", quoteValue(m.Advance)))
			return
		}
		now, err = h.s.AdvanceClock(d)
		if h.refused(w, r, user, err) {
			return
		}
	default:
		t := time.Now()
		if m.Set != "now" {
			if t, err = time.Parse(time.RFC3339Nano, m.Set); err != nil {
				httpError(w, http.StatusBadRequest, fmt.Sprintf("set %s: not an RFC 3339 time such as 2026-11-27T15:04:05Z, or now", quoteValue(m.Set)))
				return
			}
		}
		now, err = h.s.SetClock(t)
		if h.refused(w, r, user, err) {
			return
		}
	}
	h.s.log.Info("clock moved", "now", now.UTC().Format(time.RFC3339Nano), "user", user, "remote", r.RemoteAddr)
	h.answer(w, r, now)
}

// refused answers a move the server refused.
func (h clockHandler) refused(w http.ResponseWriter, r *http.Request, user string, err error) bool {
	if err == nil {
		return false
	}
	h.s.log.Info("clock move refused", "user", user, "remote", r.RemoteAddr, "error", err)
	msg := err.Error()
	if errors.Is(err, ErrRealClock) {
		msg = "the server's clock is real time: start it with ssgen serve --clock manual"
	}
	httpError(w, http.StatusConflict, msg)
	return true
}
