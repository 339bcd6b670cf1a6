package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// snapshotPath is where a server's HTTP surface (ssgen serve --http)
// serves snapshots.
const snapshotPath = "/api/snapshot"

// httpFlags are the flags of verbs that talk to a server's HTTP surface.
type httpFlags struct {
	addr  string
	token string
}

func (h *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.addr, "http", "", "the server's HTTP `URL`, as ssgen serve --http printed it (http://HOST:PORT; http://USER:PASSWORD@HOST:PORT for HTTP Basic)")
	fs.StringVar(&h.token, "token", "", "the HTTP surface's access token `T` (default: the SSGEN_TOKEN variable)")
}

// url resolves path against --http; a bare HOST:PORT means http://.
func (h *httpFlags) url(path string) (string, error) {
	a := h.addr
	if !strings.Contains(a, "://") {
		a = "http://" + a
	}
	u, err := url.Parse(a)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", usageErrorf("--http %q: want http://HOST:PORT or https://HOST:PORT", h.addr)
	}
	ref, err := url.Parse(path)
	if err != nil {
		return "", usageErrorf("%v", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + ref.Path
	u.RawQuery = ref.RawQuery
	return u.String(), nil
}

// required refuses a verb without --http; more says what else to try.
func (h *httpFlags) required(more string) error {
	if h.addr != "" {
		return nil
	}
	return usageErrorf("--http URL is required: the HTTP address of the running ssgen serve --http%s", more)
}

// call sends a request for path (with its query) to the server's HTTP
// surface, with body (nil: none) of contentType (empty: no header), and
// returns the response as do does.
func (h *httpFlags) call(ctx context.Context, env *cliEnv, method, path, contentType string, body io.Reader) (*http.Response, error) {
	u, err := h.url(path)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return h.do(ctx, env, req)
}

// decodeAnswer reads the server's JSON answer, at most limit bytes of it,
// into v.
func decodeAnswer(r io.Reader, limit int64, v any) error {
	if err := json.NewDecoder(io.LimitReader(r, limit)).Decode(v); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("the server's answer: %w", err)}
	}
	return nil
}

// do sends req with the token and returns the response, or an error
// carrying the server's one-line reason for a status other than 200.
func (h *httpFlags) do(ctx context.Context, env *cliEnv, req *http.Request) (*http.Response, error) {
	token := h.token
	if token == "" {
		token = env.getenv("SSGEN_TOKEN")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute, // an import answers once it is loaded
	}}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s %s: %w%s", req.Method, req.URL.Redacted(), err, httpDialHint(err))}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	text := strings.TrimSpace(string(msg))
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// The server's text names HTTP headers; say it with our flags.
		switch challenge := resp.Header.Get("WWW-Authenticate"); {
		case strings.HasPrefix(challenge, "Basic"):
			text = "the server wants a user name and password: --http http://USER:PASSWORD@HOST:PORT"
		case token != "":
			text = "the server refused the access token (--token or $SSGEN_TOKEN)"
		default:
			text = "the server wants its access token: --token TOKEN or $SSGEN_TOKEN"
		}
	}
	return nil, &httpStatusError{status: resp.StatusCode, msg: fmt.Sprintf("%s: %s", resp.Status, text)}
}

// httpDialHint says what to try when --http led nowhere: nothing listens
// there, or what listens is not HTTP (the MQTT port, say).
func httpDialHint(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "; is ssgen serve running with --http (or --ui) on that address? It prints the console's URL as its second line"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		strings.Contains(err.Error(), "malformed HTTP"):
		return "; the server there does not speak HTTP: if it is ssgen serve's MQTT port, use the console's URL, the second line serve --http (or --ui) prints"
	}
	return ""
}

// httpStatusError is a refusal by the server, with its reason.
type httpStatusError struct {
	status int
	msg    string
}

func (e *httpStatusError) Error() string { return e.msg }
