package console

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ssgen/ssgen/internal/protocol"
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
}

type writeResult struct {
	OK      bool   `json:"ok"`
	Result  string `json:"result"`
	Error   string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Version string `json:"version,omitempty"`
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
		if c.schema == nil {
			httpError(w, http.StatusBadRequest, "encoding schema: the console has no schema (ssgen serve --schema)")
			return
		}
		v, err := c.schema.encode(key, req.Value)
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
	c.exec(w, r, server.ExecRequest{Args: args, FencingToken: req.FencingToken, Persist: req.Persist})
}

// apiDelete deletes a key as a client's DEL would (fenced when
// fencing_token is given).
func (c *Console) apiDelete(w http.ResponseWriter, r *http.Request) {
	req, key, ok := c.readWrite(w, r)
	if !ok {
		return
	}
	c.exec(w, r, server.ExecRequest{Args: [][]byte{[]byte(protocol.VerbDel), key}, FencingToken: req.FencingToken})
}

func (c *Console) exec(w http.ResponseWriter, r *http.Request, er server.ExecRequest) {
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
	if t.answer == answerError {
		out.Error = strings.TrimSuffix(strings.TrimPrefix(string(res.Payload), "-ERR "), "\r\n")
		t.errText = []byte(out.Error)
	}
	out.Result = t.resultText()
	c.log.Info("console: write", "verb", string(er.Args[0]), "key", display(er.Args[1]), "result", out.Result, "user", pr.Username, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, out)
}
