package console

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/server"
)

// maxWriteBody bounds the body of /api/set and /api/delete.
const maxWriteBody = 1 << 20

type writeRequest struct {
	Key          string `json:"key"`                // the key, percent-encoded (a ref)
	Value        string `json:"value,omitempty"`    // SET: the value as Encoding says
	Encoding     string `json:"encoding,omitempty"` // text (default), hex, or schema (JSON of the declared type)
	TTLms        int64  `json:"ttl_ms,omitempty"`
	Persist      bool   `json:"persist,omitempty"`
	FencingToken string `json:"fencing_token,omitempty"`
	// Guard: take the key's guard lock (declared by the schema) for this
	// write and fence the write with its token, as ssgen set and del do.
	Guard bool `json:"guard,omitempty"`
}

type writeResult struct {
	OK      bool   `json:"ok"`
	Result  string `json:"result"`
	Error   string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Version string `json:"version,omitempty"`
	// Guard is the guard lock taken for the write (Guard requests).
	Guard string `json:"guard,omitempty"`
	// Earlier lists the earlier keys (renamed_from) of a moved key that
	// the write deleted, as generated code's writes do.
	Earlier []string `json:"earlier,omitempty"`
}

// readWrite decodes a write request's body (application/json only: an
// HTML form of another site cannot send it) and its key, and checks that
// the caller may write the key. It answers the refusal itself.
func (c *Console) readWrite(w http.ResponseWriter, r *http.Request) (writeRequest, []byte, bool) {
	var req writeRequest
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, "send the request as application/json")
		return req, nil, false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxWriteBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "the request is larger than the console accepts (1 MiB)")
			return req, nil, false
		}
		httpError(w, http.StatusBadRequest, "the request is not valid JSON: "+err.Error())
		return req, nil, false
	}
	key, err := url.QueryUnescape(req.Key)
	if err != nil || key == "" {
		httpError(w, http.StatusBadRequest, "key: a non-empty percent-encoded key is needed")
		return req, nil, false
	}
	readable, writable := c.Access(r)
	if writable != nil && !writable([]byte(key)) {
		status := http.StatusForbidden
		if readable != nil && !readable([]byte(key)) {
			status = http.StatusNotFound // no hint that an unreadable key exists
		}
		httpError(w, status, "the console's identity may not write this key")
		return req, nil, false
	}
	return req, []byte(key), true
}

// apiSet sets a key as a client's SET would (timestamped, fenced when
// fencing_token is given, PX from ttl_ms, aio-persistence from persist);
// the request shows in the trace under the console's client id.
func (c *Console) apiSet(w http.ResponseWriter, r *http.Request) {
	req, key, ok := c.readWrite(w, r)
	if !ok {
		return
	}
	var value []byte
	switch req.Encoding {
	case "", "text":
		value = []byte(req.Value)
	case "hex":
		v, err := hex.DecodeString(strings.Join(strings.Fields(req.Value), ""))
		if err != nil {
			httpError(w, http.StatusBadRequest, "value: not hex: "+err.Error())
			return
		}
		value = v
	case "schema":
		sv := c.schemaView()
		if sv == nil {
			httpError(w, http.StatusBadRequest, "encoding schema: the console has no schema (ssgen serve --schema)")
			return
		}
		if cur, _ := sv.moves(key); cur != "" {
			// An earlier key (renamed_from) is edited at the key it
			// moved to, whose write then deletes it.
			if _, writable := c.Access(r); writable != nil && !writable([]byte(cur)) {
				httpError(w, http.StatusForbidden, "the console's identity may not write this key's current key")
				return
			}
			key = []byte(cur)
		}
		v, err := sv.encode(key, req.Value)
		if err != nil {
			httpError(w, http.StatusBadRequest, "value: "+err.Error())
			return
		}
		value = v
	default:
		httpError(w, http.StatusBadRequest, "encoding: want text, hex or schema")
		return
	}
	if req.TTLms < 0 {
		httpError(w, http.StatusBadRequest, "ttl_ms: must not be negative")
		return
	}
	args := [][]byte{[]byte(protocol.VerbSet), key, value}
	if req.TTLms > 0 {
		args = append(args, []byte("PX"), []byte(strconv.FormatInt(req.TTLms, 10)))
	}
	c.write(w, r, req, server.ExecRequest{Args: args, FencingToken: req.FencingToken, Persist: req.Persist})
}

// apiDelete deletes a key as a client's DEL would (fenced when
// fencing_token is given).
func (c *Console) apiDelete(w http.ResponseWriter, r *http.Request) {
	req, key, ok := c.readWrite(w, r)
	if !ok {
		return
	}
	c.write(w, r, req, server.ExecRequest{Args: [][]byte{[]byte(protocol.VerbDel), key}, FencingToken: req.FencingToken})
}

// write runs er, under the key's guard lock when req asks for it, and
// answers its outcome.
func (c *Console) write(w http.ResponseWriter, r *http.Request, req writeRequest, er server.ExecRequest) {
	if !req.Guard {
		writeJSON(w, http.StatusOK, c.execWrite(r, er))
		return
	}
	key := er.Args[1]
	g, ok := c.schemaView().guard(key)
	switch {
	case !ok:
		httpError(w, http.StatusBadRequest, "guard: the schema declares no guard lock for this key")
		return
	case req.FencingToken != "":
		httpError(w, http.StatusBadRequest, "guard and fencing_token exclude each other: the guard lock's token fences the write")
		return
	}
	if _, writable := c.Access(r); writable != nil && !writable([]byte(g.Key)) {
		httpError(w, http.StatusForbidden, "guard: the console's identity may not write the guard lock "+g.Lock.QualifiedName())
		return
	}
	writeJSON(w, http.StatusOK, c.underGuard(r, g, er))
}

// underGuard takes the guard lock g once (SET NEX PX, as a lock's
// holder does), runs er fenced with the lock's token, and releases the
// lock (VDEL), as ssgen set and del do on a guarded key. The console
// holds the lock only for one write, so it never renews it. A lock held
// by someone else is refused, naming the holder; nothing is written.
func (c *Console) underGuard(r *http.Request, g schemaval.Guard, er server.ExecRequest) writeResult {
	pr := c.principal(r)
	subject := display(er.Args[1])
	lockKey := []byte(g.Key)
	holder := holderID(pr.ClientID)
	ttl := max(g.Lock.TTL.Milliseconds(), 1)
	take := c.srv.Exec(server.ExecRequest{Client: pr.ClientID, Args: [][]byte{
		[]byte(protocol.VerbSet), lockKey, holder, []byte(protocol.OptNEX), []byte(protocol.OptPX), []byte(strconv.FormatInt(ttl, 10)),
	}})
	name := g.Lock.QualifiedName()
	switch a, _ := summarize(take.Payload); {
	case take.Err != "":
		msg := string(take.Err)
		return writeResult{Result: "-ERR " + msg, Error: g.Describe(subject) + ": taking it: " + msg, Reason: take.Why, Guard: name}
	case a != answerOK:
		// The holder is named only to a caller who may read the lock key.
		var v []byte
		known := false
		if readable, _ := c.Access(r); readable == nil || readable(lockKey) {
			cur := c.srv.Exec(server.ExecRequest{Client: pr.ClientID, Args: [][]byte{[]byte(protocol.VerbGet), lockKey}})
			v, known = bulk(cur.Payload)
		}
		return writeResult{Result: "lock held", Error: g.HeldBy(subject, v, known) + ": try again when it is free", Guard: name}
	}
	er.FencingToken = take.Version.String()
	out := c.execWrite(r, er)
	out.Guard = name
	rel := c.srv.Exec(server.ExecRequest{Client: pr.ClientID, Args: [][]byte{[]byte(protocol.VerbVDel), lockKey, holder}})
	if a, n := summarize(rel.Payload); a != answerInt || n != 1 {
		c.log.Warn("console: guard lock not released (it expires by itself)", "lock", name, "key", display(lockKey), "ttl_ms", ttl)
	}
	return out
}

// holderID is a lock holder id as the runtime writes it: the client id,
// '/', and 64 random bits in hex, unique to one hold (lockHolder reads it).
func holderID(client string) []byte {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.AppendEncode(append([]byte(client), '/'), b[:])
}

// bulk reads a RESP3 bulk string reply ($n CRLF bytes CRLF).
func bulk(p []byte) ([]byte, bool) {
	a, n := summarize(p)
	if a != answerValue {
		return nil, false
	}
	i := strings.Index(string(p), "\r\n")
	if i < 0 || len(p) < i+2+n {
		return nil, false
	}
	return p[i+2 : i+2+n], true
}

// execWrite runs er, a SET or DEL, and then, for a declared key that
// moved, deletes its earlier keys fenced like it, as generated code does:
// else a value left there would read as the key's once it is deleted.
func (c *Console) execWrite(r *http.Request, er server.ExecRequest) writeResult {
	out := c.exec(r, er)
	_, earlier := c.schemaView().moves(er.Args[1])
	if !out.OK || len(earlier) == 0 {
		return out
	}
	_, writable := c.Access(r)
	for _, old := range earlier {
		if writable != nil && !writable([]byte(old)) {
			out.Error = "its earlier key " + display([]byte(old)) + " is not deleted: the console's identity may not write it"
			continue
		}
		res := c.exec(r, server.ExecRequest{Args: [][]byte{[]byte(protocol.VerbDel), []byte(old)}, FencingToken: er.FencingToken})
		switch {
		case !res.OK:
			out.Error = "its earlier key " + display([]byte(old)) + " is not deleted: " + res.Error
		case res.Result == "1":
			out.Earlier = append(out.Earlier, display([]byte(old)))
		}
	}
	return out
}

func (c *Console) exec(r *http.Request, er server.ExecRequest) writeResult {
	pr := c.principal(r)
	er.Client = pr.ClientID
	res := c.srv.Exec(er)
	var t traceRecord
	t.status = 200
	t.answer, t.size = summarize(res.Payload)
	out := writeResult{OK: t.answer != answerError, Reason: res.Why}
	if !res.Version.IsZero() {
		out.Version = res.Version.String()
	}
	if res.Err != "" {
		out.Error = string(res.Err)
		t.errText = []byte(out.Error)
	}
	out.Result = t.resultText()
	c.log.Info("console: write", "verb", string(er.Args[0]), "key", display(er.Args[1]), "result", out.Result, "user", pr.Username, "remote", r.RemoteAddr)
	return out
}
