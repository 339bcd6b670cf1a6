package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
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
	fs.StringVar(&h.addr, "http", "", "the server's HTTP address, as ssgen serve --http printed it (http://HOST:PORT; http://USER:PASSWORD@HOST:PORT for HTTP Basic)")
	fs.StringVar(&h.token, "token", "", "the HTTP surface's access token (default: the SSGEN_TOKEN variable)")
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
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)}
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
	return nil, &httpStatusError{status: resp.StatusCode, msg: fmt.Sprintf("%s: %s", resp.Status, text)}
}

// httpStatusError is a refusal by the server, with its reason.
type httpStatusError struct {
	status int
	msg    string
}

func (e *httpStatusError) Error() string { return e.msg }
