package console

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// maxShownValue bounds the value bytes /api/key returns (as text and as
// hex); the rest is summarised by its size.
const maxShownValue = 64 << 10

// display is how a key or value is shown: itself when it is printable
// UTF-8, else Go-quoted (escapes visible, never raw control bytes).
func display(b []byte) string {
	if printable(b) {
		return string(b)
	}
	return strconv.QuoteToASCII(string(b))
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	return strings.IndexFunc(string(b), func(r rune) bool { return !unicode.IsPrint(r) && r != '\n' && r != '\t' }) < 0
}

// ref is a key as a URL query value: the exact bytes, percent-encoded. The
// API takes keys back in that form (?key=, "key" in bodies).
func ref(b []byte) string { return url.QueryEscape(string(b)) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type keyItem struct {
	Name    string `json:"name"`
	Ref     string `json:"ref"`
	Folder  bool   `json:"folder,omitempty"`
	Size    int    `json:"size"`
	Version string `json:"version,omitempty"`
	TTLms   int64  `json:"ttl_ms"` // -1: never expires
	Fenced  bool   `json:"fenced,omitempty"`
	// Declared is the qualified name of the schema's declaration of the
	// key (with Options.Schema), followed by " (earlier key, renamed_from)"
	// when the key is the declaration's earlier key.
	Declared string `json:"declared,omitempty"`
}

type keysPage struct {
	Items    []keyItem `json:"items"`
	Next     string    `json:"next,omitempty"` // ?from= of the next page, escaped
	Examined int       `json:"examined"`
}

// browse reads ?prefix=, ?q= (a glob), ?from= and ?limit= and returns one
// bounded page of the keys the caller may read.
func (c *Console) browse(r *http.Request) keysPage {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 200
	}
	p := c.srv.Engine().Browse(engine.BrowseOptions{
		Prefix: q.Get("prefix"), Folders: q.Get("flat") == "",
		Pattern: q.Get("q"), From: q.Get("from"), Limit: limit,
		Visible: c.readable(r),
	})
	now := time.Now()
	out := keysPage{Items: make([]keyItem, 0, len(p.Items)), Examined: p.Examined}
	sv := c.schemaView()
	for _, it := range p.Items {
		ki := keyItem{Name: display([]byte(it.Key)), Ref: ref([]byte(it.Key)), Folder: it.Folder, Size: it.Size, TTLms: -1, Fenced: it.Fenced}
		if !it.Folder {
			ki.Version = it.Version.String()
			ki.Declared = sv.declared([]byte(it.Key))
			if !it.Deadline.IsZero() {
				ki.TTLms = max(it.Deadline.Sub(now).Milliseconds(), 0)
			}
		}
		out.Items = append(out.Items, ki)
	}
	if p.Next != "" {
		out.Next = ref([]byte(p.Next))
	}
	return out
}

func (c *Console) apiKeys(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, c.browse(r))
}

type keyDetail struct {
	Name         string       `json:"name"`
	Ref          string       `json:"ref"`
	Size         int          `json:"size"`
	Text         *string      `json:"text,omitempty"` // the value, when it is printable UTF-8
	Hex          string       `json:"hex"`
	Truncated    bool         `json:"truncated,omitempty"`
	Version      string       `json:"version"`
	VersionTime  string       `json:"version_time,omitempty"`
	FencingToken string       `json:"fencing_token,omitempty"`
	ExpiresAt    string       `json:"expires_at,omitempty"`
	TTLms        int64        `json:"ttl_ms"`
	Durable      bool         `json:"durable"`
	Watchers     []string     `json:"watchers"`
	Schema       *Description `json:"schema,omitempty"`
	Lock         *lockInfo    `json:"lock,omitempty"`
	Writable     bool         `json:"writable"`
}

type lockInfo struct {
	Holder    string `json:"holder"`     // the holder id stored in the lock key
	Client    string `json:"client"`     // the client id it starts with
	Connected bool   `json:"connected"`  // that client is connected now
	LeaseMs   int64  `json:"lease_ms"`   // time left of the lease (the key's TTL)
	FromValue bool   `json:"from_value"` // recognised by its value's shape, not declared by a schema
}

// apiKey answers the details of ?key=. A key the caller may not read is
// answered exactly as a missing one.
func (c *Console) apiKey(w http.ResponseWriter, r *http.Request) {
	key := []byte(r.URL.Query().Get("key"))
	readable, writable := c.Access(r)
	if len(key) == 0 || readable != nil && !readable(key) {
		httpError(w, http.StatusNotFound, "no such key")
		return
	}
	eng := c.srv.Engine()
	ent, ok := eng.Lookup(key)
	if !ok {
		httpError(w, http.StatusNotFound, "no such key")
		return
	}
	now := time.Now()
	d := keyDetail{
		Name: display(key), Ref: ref(key), Size: len(ent.Value),
		Version: ent.Version.String(), TTLms: -1, Durable: ent.Durable,
		Watchers: eng.Watchers(key), Writable: writable == nil || writable(key),
	}
	if d.Watchers == nil {
		d.Watchers = []string{}
	}
	if !ent.Version.IsZero() {
		d.VersionTime = ent.Version.Time().UTC().Format(time.RFC3339Nano)
	}
	if !ent.FencingToken.IsZero() {
		d.FencingToken = ent.FencingToken.String()
	}
	if !ent.Deadline.IsZero() {
		d.ExpiresAt = ent.Deadline.UTC().Format(time.RFC3339Nano)
		d.TTLms = max(ent.Deadline.Sub(now).Milliseconds(), 0)
	}
	v := ent.Value
	if len(v) > maxShownValue {
		v, d.Truncated = v[:maxShownValue], true
	}
	d.Hex = hex.EncodeToString(v)
	if utf8.Valid(v) {
		s := string(v)
		d.Text = &s
	}
	isLock := false
	if sv := c.schemaView(); sv != nil {
		if desc, ok := sv.describe(key, ent.Value); ok {
			d.Schema = &desc
			isLock = desc.Lock
		}
	}
	if holder, client, shaped := lockHolder(ent.Value); isLock || shaped && !ent.Deadline.IsZero() {
		li := &lockInfo{Holder: display(ent.Value), Client: client, LeaseMs: d.TTLms, FromValue: !isLock}
		if shaped {
			li.Holder = holder
		}
		if client != "" {
			clients, _ := c.srv.Clients(0)
			for _, ci := range clients {
				if ci.ID == client && ci.Connected {
					li.Connected = true
				}
			}
		}
		d.Lock = li
	}
	writeJSON(w, http.StatusOK, d)
}

// apiDeclaration answers what the schema declares ?key= to be, whether
// or not the key exists (the New-key form offers a declared key's JSON
// and guard lock from it). Without a schema, for an undeclared key and
// for a key the caller may not read it answers 404.
func (c *Console) apiDeclaration(w http.ResponseWriter, r *http.Request) {
	key := []byte(r.URL.Query().Get("key"))
	readable, _ := c.Access(r)
	d, ok := c.schemaView().declaration(key)
	if len(key) == 0 || readable != nil && !readable(key) || !ok {
		httpError(w, http.StatusNotFound, "no declaration")
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// lockHolder reads a lock key's value as the runtime writes it: the
// holder's client id, '/', and 16 hex digits unique to the lease.
func lockHolder(v []byte) (holder, client string, ok bool) {
	i := strings.LastIndexByte(string(v), '/')
	if i <= 0 || len(v)-i-1 != 16 || !printable(v[:i]) {
		return "", "", false
	}
	if _, err := hex.DecodeString(string(v[i+1:])); err != nil {
		return "", "", false
	}
	return string(v), string(v[:i]), true
}

type clientJSON struct {
	ID            string    `json:"id"`
	User          string    `json:"user,omitempty"`
	Remote        string    `json:"remote"`
	Connected     bool      `json:"connected"`
	Disconnected  string    `json:"disconnected_at,omitempty"`
	Subscriptions []subJSON `json:"subscriptions"`
	Watches       int       `json:"watches"`
	Watching      []keyItem `json:"watching"` // the first keys it watches that the caller may read
}

type subJSON struct {
	Filter string `json:"filter"`
	// Key is the key of a notification topic of one key, when the caller
	// may read it; Hidden is set (and Filter emptied) when it may not.
	Key    string `json:"key,omitempty"`
	Hidden bool   `json:"hidden,omitempty"`
}

// apiClients lists the embedded broker's clients with their
// subscriptions and KEYNOTIFY registrations; a notification topic or a
// registration of a key the caller may not read is never named.
func (c *Console) apiClients(w http.ResponseWriter, r *http.Request) {
	readable := c.readable(r)
	list, total := c.srv.Clients(0)
	out := struct {
		Clients  []clientJSON `json:"clients"`
		Total    int          `json:"total"`
		External bool         `json:"external"`
	}{Clients: make([]clientJSON, 0, len(list)), Total: total, External: c.srv.External()}
	for _, ci := range list {
		cj := clientJSON{ID: ci.ID, User: ci.Username, Remote: ci.Remote, Connected: ci.Connected, Watches: ci.Watches, Subscriptions: []subJSON{}, Watching: []keyItem{}}
		if !ci.Disconnected.IsZero() {
			cj.Disconnected = ci.Disconnected.UTC().Format(time.RFC3339)
		}
		for _, f := range ci.Subscriptions {
			s := subJSON{Filter: f}
			if k, ok := server.NotifyKey(ci.ID, f); ok {
				if readable != nil && !readable(k) {
					s = subJSON{Hidden: true}
				} else {
					s.Key = display(k)
				}
			}
			cj.Subscriptions = append(cj.Subscriptions, s)
		}
		if ci.Watches > 0 {
			_, keys := c.srv.Engine().Watching(ci.ID, 50)
			for _, k := range keys {
				if readable == nil || readable([]byte(k)) {
					cj.Watching = append(cj.Watching, keyItem{Name: display([]byte(k)), Ref: ref([]byte(k))})
				}
			}
		}
		out.Clients = append(out.Clients, cj)
	}
	writeJSON(w, http.StatusOK, out)
}

// apiSession tells a page or a program its CSRF token and identity.
func (c *Console) apiSession(w http.ResponseWriter, r *http.Request) {
	caller, _ := r.Context().Value(whoKey{}).(who)
	pr := c.principal(r)
	out := map[string]any{
		"csrf": c.gate.csrfToken(caller), "csrf_header": csrfHeader,
		"auth": c.opts.Auth.String(), "client_id": pr.ClientID, "user": pr.Username,
		"authorization": c.opts.Policy != nil, "schema": c.schemaView() != nil,
	}
	if c.store != nil {
		// Why the value under $ssgen/schema is not used ("" when it is).
		out["schema_source"], out["schema_error"] = "store", c.schemaError()
	}
	writeJSON(w, http.StatusOK, out)
}
