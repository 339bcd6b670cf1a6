package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/ssgen/ssgen/server/engine"
	"github.com/ssgen/ssgen/server/snapshot"
)

// DefaultMaxSnapshotBody bounds an uploaded snapshot when the server has
// no --max-bytes quota (Options.MaxBytes) and SnapshotHTTP.MaxBodyBytes
// says nothing: 256 MiB, a few million keys. Reading a snapshot takes
// memory in proportion to its keys (measured: a million 10-byte keys with
// empty values, 31.5 MB of JSON, raised the process's resident memory by
// 11 to 18 times that, and the loaded store kept 6 to 7 times; keys of 30
// bytes with short values about 5 times, values of kilobytes under once),
// so without quotas this bound is what bounds memory.
const DefaultMaxSnapshotBody = 256 << 20

// snapshotEntryBytes is the most JSON one snapshot entry takes besides its
// key's and value's own text: the field names, encodings, a version, a
// fencing token and a time to live.
const snapshotEntryBytes = 1 << 10

// MaxSnapshotBody is the body limit of SnapshotHandler when
// SnapshotHTTP.MaxBodyBytes is 0, tied to the server's quotas: with
// Options.MaxBytes the largest file a snapshot within the quotas can be
// (each of at most MaxKeys keys, or MaxBytes when MaxKeys is 0, with
// snapshotEntryBytes of its own, and every byte of keys and values as
// six, the longest JSON escape), else DefaultMaxSnapshotBody.
func (s *Server) MaxSnapshotBody() int64 {
	if s.opts.MaxBytes <= 0 {
		return DefaultMaxSnapshotBody
	}
	keys := int64(s.opts.MaxKeys)
	if keys <= 0 {
		keys = s.opts.MaxBytes
	}
	const most = 1 << 50 // never overflows below; no body is that large
	if keys > most/snapshotEntryBytes || s.opts.MaxBytes > most/6 {
		return most
	}
	return 1<<20 + keys*snapshotEntryBytes + 6*s.opts.MaxBytes
}

// SnapshotHTTP configures SnapshotHandler.
type SnapshotHTTP struct {
	// Access, when set, returns which keys the caller of r may read and
	// write (a nil function allows every key): an export holds only the
	// readable keys, an import with a key that is not writable is refused
	// (403), and so is a replace that would delete one.
	Access func(r *http.Request) (readable, writable func(key []byte) bool)
	// MaxBodyBytes bounds an uploaded snapshot (Server.MaxSnapshotBody
	// when 0); a larger one is refused with 413 after reading that much.
	MaxBodyBytes int64
}

// SnapshotHandler serves WriteSnapshot and ReadSnapshot over HTTP:
//
//   - GET (or HEAD): 200 with the snapshot as application/json, written
//     as it is encoded (Cache-Control no-store, as an attachment named
//     ssgen-snapshot-<UTC time>.json);
//   - POST with Content-Type application/json and the snapshot as body,
//     ?mode=empty (the default), merge or replace: loads it and answers
//     200 with {"mode":…,"stored":N,"deleted":M}; a refusal is answered
//     with one line of text/plain naming the problem: 400 for an invalid
//     snapshot or mode, 403 for a key the caller may not write, 409 when
//     mode empty finds keys, 413 for a body over MaxBodyBytes, 415 for
//     another content type, 507 for a snapshot beyond the server's
//     quotas or limits, 500 when the durable store failed;
//   - anything else: 405.
//
// It authenticates nobody: mount it behind the authentication and
// cross-site request protection of the HTTP surface that serves it. The
// content type requirement keeps a cross-site HTML form, which can only
// post form encodings and text/plain, from loading a snapshot even then.
func (s *Server) SnapshotHandler(o SnapshotHTTP) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = s.MaxSnapshotBody()
	}
	return &snapshotHandler{s: s, o: o}
}

type snapshotHandler struct {
	s *Server
	o SnapshotHTTP
}

func (h *snapshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var readable, writable func([]byte) bool
	if h.o.Access != nil {
		readable, writable = h.o.Access(r)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.export(w, r, readable)
	case http.MethodPost:
		h.load(w, r, readable, writable)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: GET exports, POST imports")
	}
}

func (h *snapshotHandler) export(w http.ResponseWriter, r *http.Request, readable func([]byte) bool) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	snap := h.s.eng.Export(readable)
	name := "ssgen-snapshot-" + snap.Taken.UTC().Format("20060102T150405Z") + ".json"
	hd.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if r.Method == http.MethodHead {
		return
	}
	if err := snapshot.Write(w, snap); err != nil {
		// The status line is gone: abort the response, so that the client
		// sees a broken transfer rather than a complete-looking one.
		h.s.log.Info("snapshot export cut short", "remote", r.RemoteAddr, "error", err)
		panic(http.ErrAbortHandler)
	}
}

func (h *snapshotHandler) load(w http.ResponseWriter, r *http.Request, readable, writable func([]byte) bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "a snapshot is posted as Content-Type: application/json")
		return
	}
	mode := engine.ImportEmpty
	if m := r.URL.Query().Get("mode"); m != "" {
		if mode, err = engine.ParseImportMode(m); err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	body := http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes)
	res, err := h.s.readSnapshot(body, engine.ImportOptions{Mode: mode, Writable: writable, Readable: readable})
	if err != nil {
		var tooBig *http.MaxBytesError
		status := http.StatusInternalServerError
		switch {
		case errors.As(err, &tooBig):
			status, err = http.StatusRequestEntityTooLarge, fmt.Errorf("the snapshot is larger than this server accepts (%d bytes)", tooBig.Limit)
		case errors.Is(err, engine.ErrQuotaExceeded):
			status = http.StatusInsufficientStorage
		case errors.Is(err, engine.ErrNotAuthorized):
			status = http.StatusForbidden
		case errors.Is(err, engine.ErrNotEmpty):
			status = http.StatusConflict
		case errors.Is(err, snapshot.ErrInvalid):
			status = http.StatusBadRequest
		}
		h.s.log.Info("snapshot import refused", "remote", r.RemoteAddr, "mode", mode.String(), "error", err)
		httpError(w, status, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Mode    string `json:"mode"`
		Stored  int    `json:"stored"`
		Deleted int    `json:"deleted"`
	}{mode.String(), res.Stored, res.Deleted})
}

// httpError answers status with msg on one line of text.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, strings.ReplaceAll(msg, "\n", " "))
}
