package console

import (
	"embed"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/textsafe"
)

//go:embed assets
var assets embed.FS

var pageTemplate = template.Must(template.New("index.html").Funcs(template.FuncMap{
	"ttl": func(ms int64) string {
		if ms < 0 {
			return "never"
		}
		return (time.Duration(ms) * time.Millisecond).Round(time.Millisecond).String()
	},
	"shown": shown,
}).ParseFS(assets, "assets/index.html"))

// shown is client text as the console displays it: the characters a
// reader cannot see or that reorder a line (textsafe.Hidden: bidi
// controls such as U+202E, other controls, the byte order mark) as the
// visible escape \uXXXX, so that "evil\u202Enimda" cannot pass for
// another name (issue #25). console.js's shown does the same.
func shown(s string) string {
	if !strings.ContainsFunc(s, textsafe.Hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if textsafe.Hidden(r) {
			b.WriteString(textsafe.Escape(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

type pageData struct {
	CSRF     string
	Auth     string
	Identity string
	Server   string
	Schema   bool
	Keys     keysPage
}

// page is the console: rendered on the server with the first page of
// keys, so it shows the store before any script runs; console.js then
// keeps it live.
func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	caller, _ := r.Context().Value(whoKey{}).(who)
	pr := c.principal(r)
	id := pr.ClientID
	if pr.Username != "" {
		id += " (user " + pr.Username + ")"
	}
	if c.opts.Policy == nil {
		id += ", no authorization rules: every key"
	}
	d := pageData{
		CSRF: c.gate.csrfToken(caller), Auth: c.opts.Auth.String(), Identity: id,
		Server: c.srv.URL(), Keys: c.browse(r), Schema: c.schemaView() != nil,
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if err := pageTemplate.Execute(w, d); err != nil {
		c.log.Warn("console: page", "error", err)
	}
}

// asset serves the embedded script and style sheet.
func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := assets.ReadFile("assets/" + path.Base(name))
	if err != nil || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}
