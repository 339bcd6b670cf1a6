package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxChaosBody bounds a chaos file put over HTTP.
const maxChaosBody = 64 << 10

// ChaosHandler serves the server's chaos rules over HTTP:
//
//   - GET (or HEAD): 200 with {"rules": [...]} (application/json): each
//     rule in force with "fired" (requests it affected) and, for a rule
//     with a count, "left";
//   - PUT with a chaos file as body, Content-Type application/json or
//     application/yaml (also text/yaml, application/x-yaml): replaces the
//     rules, all or nothing, and answers 200 as GET does; a refusal is one
//     line of text/plain: 400 naming the rule and field at fault (the rules
//     in force stay), 413 over 64 KiB, 415 for another content type;
//   - DELETE: clears the rules, 200 as GET;
//   - anything else: 405.
//
// Like SnapshotHandler it authenticates nobody: mount it behind the
// authentication and cross-site request protection of the HTTP surface
// that serves it (the console's Handle). o.Caller, when set, decides who
// may use it at all (403 for the others: the rules' fired counts tell
// about keys, and the rules act on every client) and names the caller in
// the log.
func (s *Server) ChaosHandler(o ControlHTTP) http.Handler { return chaosHandler{s, o} }

// ControlHTTP is what ChaosHandler and ClockHandler know about their
// callers.
type ControlHTTP struct {
	// Caller, when set, returns the caller's name for the log ("" when
	// the HTTP surface has no user accounts) and whether it may change
	// the server's chaos rules or clock: ssgen serve allows it, under an
	// authorization policy, only to a console identity the policy grants
	// write on every key (Policy.MayWriteEvery). Nil: everyone may.
	Caller func(r *http.Request) (user string, allowed bool)
}

// caller returns the name of r's caller and whether it is allowed.
func (o ControlHTTP) caller(r *http.Request) (string, bool) {
	if o.Caller == nil {
		return "", true
	}
	return o.Caller(r)
}

// forbidden is the answer to a caller ControlHTTP does not allow.
const controlForbidden = "forbidden: under the authorization policy, changing the chaos rules or the clock needs write on every key (a rule granting Write or ReadWrite on keyType pattern \"*\")"

type chaosHandler struct {
	s *Server
	o ControlHTTP
}

func (h chaosHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := h.o.caller(r)
	if !ok {
		h.s.log.Info("chaos API refused", "user", user, "remote", r.RemoteAddr, "method", r.Method)
		httpError(w, http.StatusForbidden, controlForbidden)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut:
		if !h.put(w, r, user) {
			return
		}
	case http.MethodDelete:
		_ = h.s.SetChaos(nil)
		h.s.log.Info("chaos rules cleared over HTTP", "user", user, "remote", r.RemoteAddr)
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: GET reads the chaos rules, PUT replaces them, DELETE clears them")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_, _ = w.Write(chaosJSON(h.s.Chaos()))
	}
}

func (h chaosHandler) put(w http.ResponseWriter, r *http.Request, user string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil:
	case mt == "application/json", mt == "application/yaml", mt == "application/x-yaml", mt == "text/yaml":
	default:
		err = errors.New(mt)
	}
	if err != nil {
		httpError(w, http.StatusUnsupportedMediaType, "chaos rules are put as Content-Type: application/yaml or application/json")
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxChaosBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("chaos rules are at most %d bytes", maxChaosBody))
		} else {
			httpError(w, http.StatusBadRequest, "reading the chaos rules: "+err.Error())
		}
		return false
	}
	rules, err := ParseChaos(bytes.NewReader(body))
	if err == nil {
		err = h.s.SetChaos(rules)
	}
	if err != nil {
		h.s.log.Info("chaos rules refused", "user", user, "remote", r.RemoteAddr, "error", err)
		httpError(w, http.StatusBadRequest, err.Error())
		return false
	}
	h.s.log.Info("chaos rules put over HTTP", "user", user, "remote", r.RemoteAddr, "rules", len(rules))
	return true
}
