package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/schema"
)

// schemaFlags are the flags of the shell verbs that read keys through a
// schema: which schema, or none (--raw).
type schemaFlags struct {
	file string
	raw  bool
	used string // the file load loaded
	// ctx and conn, set by via, let --schema store read the schema
	// published on the verb's broker.
	ctx  context.Context
	conn *connFlags
}

// via lets --schema store (schemaFromStore) read the published schema
// through the verb's connection flags.
func (s *schemaFlags) via(ctx context.Context, cf *connFlags) { s.ctx, s.conn = ctx, cf }

// fromStore says that the flags or the environment name the schema
// published in the store (--schema store) rather than a file.
func (s *schemaFlags) fromStore(env *cliEnv) bool {
	if s.raw {
		return false
	}
	file := s.file
	if file == "" {
		file = env.getenv(schemaEnv)
	}
	return file == schemaFromStore
}

const schemaEnv = "SSGEN_SCHEMA"

func (s *schemaFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.file, "schema", "", "schema `FILE` that types the keys, or \"store\": the schema published on the broker (ssgen schema publish) (default: $"+schemaEnv+", else ./"+defaultSchemaFile+" when there is one)")
	fs.BoolVar(&s.raw, "raw", false, "ignore any schema: values are bytes")
}

// load loads the schema the flags, the environment or the current
// directory name; nil when there is none (or --raw).
func (s *schemaFlags) load(env *cliEnv) (*schema.Schema, error) {
	if s.raw {
		return nil, nil
	}
	file, implicit := s.file, false
	if file == "" {
		file = env.getenv(schemaEnv)
	}
	if file == "" {
		if _, err := os.Stat(defaultSchemaFile); err != nil {
			return nil, nil
		}
		file, implicit = defaultSchemaFile, true
	}
	if file == schemaFromStore {
		if s.conn == nil {
			return nil, usageErrorf("--schema store: this verb cannot read the published schema")
		}
		p, err := loadPublished(s.ctx, env, s.conn)
		if err != nil {
			return nil, err
		}
		s.used = schemastore.Source(p.Time)
		return p.Schema, nil
	}
	sc, err := loadSchema(env, file)
	s.used = file
	if err != nil {
		if implicit {
			fmt.Fprintf(env.stderr, "(%s was found in the current directory; --raw ignores it)\n", file)
		}
		return nil, err
	}
	s.used = file
	return sc, nil
}

// resolver is load's schema as a resolver; nil when there is no schema.
func (s *schemaFlags) resolver(env *cliEnv) (*schemaval.Resolver, error) {
	sc, err := s.load(env)
	if sc == nil || err != nil {
		return nil, err
	}
	return schemaval.NewResolver(sc), nil
}

// resolve reads a key through the resolver; nil when there is none or
// the key is not declared. A key that is not UTF-8 is resolved by its
// bytes, as serve --enforce and generated accessors take it.
func resolve(r *schemaval.Resolver, key []byte) *schemaval.Match {
	if r == nil {
		return nil
	}
	m, _ := r.Resolve(string(key))
	return m
}

// registerStrict adds --strict to a verb that writes keys.
func registerStrict(fs *flag.FlagSet) *bool {
	return fs.Bool("strict", false, "refuse a key the schema does not declare (exit 2, nothing sent)")
}

// checkDeclared is what a writing verb (set, del, vdel) does about a key
// the schema in effect does not declare (m nil): one warning line on
// stderr naming the closest declaration, or with strict an error before
// anything is sent. Without a schema there is nothing to check, and
// strict is a usage error.
func checkDeclared(env *cliEnv, verb string, res *schemaval.Resolver, m *schemaval.Match, key []byte, subject string, strict bool) error {
	switch {
	case strict && res == nil:
		return usageErrorf("--strict needs a schema (--schema, $%s or ./%s)", schemaEnv, defaultSchemaFile)
	case res == nil || m != nil:
		return nil
	case strict:
		return usageErrorf("%s (nothing was sent)", undeclared(res, key, subject))
	}
	// Said before the request: what is sent, not what happened.
	what := "sending the value as bytes"
	if verb != "set" {
		what = "sending the delete anyway"
	}
	fmt.Fprintf(env.stderr, "ssgen %s: warning: %s; %s (--strict refuses, --raw is quiet)\n", verb, undeclared(res, key, subject), what)
	return nil
}

// undeclared says that the schema behind r declares no key, and names
// the declaration key comes closest to and why it is not that one.
func undeclared(r *schemaval.Resolver, key []byte, subject string) string {
	msg := subject + " is not declared by the schema"
	if !utf8.Valid(key) {
		return msg + " (it is not UTF-8 text)"
	}
	miss, ok := r.Nearest(string(key))
	if !ok {
		return msg
	}
	kind := ""
	if miss.Lock {
		kind = "lock "
	}
	return fmt.Sprintf("%s: closest is %s%s (%s), but %s", msg, kind, miss.Name, miss.Path, miss.Why)
}

// schemaInfo is what --json prints about the declaration a key is.
type schemaInfo struct {
	Name     string         `json:"name"`
	Kind     string         `json:"kind"` // "key" or "lock"
	Params   map[string]any `json:"params,omitempty"`
	Type     string         `json:"type,omitempty"`
	Encoding string         `json:"encoding,omitempty"`
	TTL      string         `json:"ttl,omitempty"`
	Guard    string         `json:"guard,omitempty"`
	GuardKey string         `json:"guardKey,omitempty"`
	Persist  bool           `json:"persist,omitempty"`
	// Earlier: the key is the declared key's earlier name (renamed_from).
	Earlier bool `json:"earlier,omitempty"`
}

func infoOf(m *schemaval.Match) *schemaInfo {
	if m == nil {
		return nil
	}
	in := &schemaInfo{Name: m.Name(), Params: m.ParamMap()}
	if m.Lock != nil {
		in.Kind, in.TTL = "lock", m.Lock.TTL.String()
		return in
	}
	k := m.Key
	in.Kind, in.Type, in.Encoding, in.Persist, in.Earlier = "key", k.Type.String(), string(k.Encoding), k.Persist, m.Earlier
	if k.TTL > 0 {
		in.TTL = k.TTL.String()
	}
	in.GuardKey, _ = m.GuardKey()
	if k.Guard != nil {
		in.Guard = k.Guard.QualifiedName()
	}
	return in
}

// declaredTTL is the TTL the schema gives the key's writes (a lock's
// lease), 0 when none.
func declaredTTL(m *schemaval.Match) time.Duration {
	switch {
	case m == nil:
		return 0
	case m.Lock != nil:
		return m.Lock.TTL
	}
	return m.Key.TTL
}

// describe names a declaration for a message: `Thermostat.SetPoint
// (Everything, msgpack)`, or `lock Thermostat.Owner`.
func describe(m *schemaval.Match) string {
	if m.Lock != nil {
		return "lock " + m.Name()
	}
	if m.Earlier {
		return fmt.Sprintf("%s (%s, %s; its earlier key)", m.Name(), m.Key.Type, m.Key.Encoding)
	}
	return fmt.Sprintf("%s (%s, %s)", m.Name(), m.Key.Type, m.Key.Encoding)
}

// decoded is a value read through the schema: its JSON-able form, or the
// bytes when the key is undeclared, a lock, or does not decode.
type decoded struct {
	match *schemaval.Match
	raw   []byte
	value any
	typed bool  // value holds the decoded value
	err   error // why a declared key's value did not decode
}

func decodeValue(m *schemaval.Match, raw []byte) decoded {
	d := decoded{match: m, raw: raw}
	if m == nil || m.Codec() == nil {
		return d
	}
	d.value, d.err = m.Codec().Decode(raw)
	d.typed = d.err == nil
	return d
}

// text renders the value for a person: a scalar's text, a composite's
// indented JSON, undeclared bytes as they are.
func (d decoded) text() []byte {
	if !d.typed {
		return d.raw
	}
	if s, ok := schemaval.Text(d.value); ok {
		return []byte(s)
	}
	b, _ := json.MarshalIndent(d.value, "", "  ")
	return b
}

// token renders the value as one space-free field of a watch line: a
// scalar as watch prints bytes, a composite as JSON without white space.
func (d decoded) token(asHex bool) string {
	if !d.typed || asHex {
		return token(d.raw, asHex)
	}
	if s, ok := schemaval.Text(d.value); ok {
		return token([]byte(s), false)
	}
	return compactJSON(d.value)
}

// compactJSON is JSON with no white space outside strings and white space
// inside them escaped, so that it is one field of a line.
func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	var out strings.Builder
	inString, escaped := false, false
	for _, r := range string(b) {
		switch {
		case escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case inString && unicode.IsSpace(r):
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}

// record is one --json line of get, watch or keys, its fields in this
// order, those that do not apply left out.
type record struct {
	Event       string  `json:"event,omitempty"`
	Found       *bool   `json:"found,omitempty"`
	Key         *string `json:"key,omitempty"`
	KeyHex      string  `json:"keyHex,omitempty"`
	Value       any     `json:"value,omitempty"` // a nil interface only: a false or null value is kept
	ValueHex    *string `json:"valueHex,omitempty"`
	DecodeError string  `json:"decodeError,omitempty"`
	Version     string  `json:"version,omitempty"`
	Written     string  `json:"written,omitempty"`
	TTL         string  `json:"ttl,omitempty"`
	Expires     string  `json:"expires,omitempty"`
	// ReadFrom is the key's earlier name (renamed_from) when get read the
	// value there, the key itself being absent.
	ReadFrom string      `json:"readFrom,omitempty"`
	Schema   *schemaInfo `json:"schema,omitempty"`
}

// newRecord starts a record with the key ("keyHex" when it is not UTF-8,
// or asHex) and the declaration it is.
func newRecord(key []byte, asHex bool, m *schemaval.Match) *record {
	r := &record{Schema: infoOf(m)}
	if asHex || !utf8.Valid(key) {
		r.KeyHex = hex.EncodeToString(key)
	} else {
		k := string(key)
		r.Key = &k
	}
	return r
}

// setValue puts the value in: "value" (the decoded value, or the text of
// bytes that are UTF-8) or "valueHex", and the reason a declared key's
// value did not decode.
func (r *record) setValue(d decoded) {
	switch {
	case d.typed:
		r.Value = jsonValue{d.value}
	case utf8.Valid(d.raw):
		r.Value = string(d.raw)
	default:
		h := hex.EncodeToString(d.raw)
		r.ValueHex = &h
	}
	if d.err != nil {
		r.DecodeError = d.err.Error()
	}
}

// jsonValue keeps a decoded value that is nil (an absent list or map)
// from being taken for no value at all.
type jsonValue struct{ v any }

func (j jsonValue) MarshalJSON() ([]byte, error) { return json.Marshal(j.v) }

// setVersion puts in the version and what follows from it: when it was
// written and, for a declaration with a TTL, when it expires if it was
// written with that TTL.
func (r *record) setVersion(m *schemaval.Match, ver hlc.HLC) {
	if ver.IsZero() {
		return
	}
	r.Version = ver.String()
	r.Written = ver.Time().UTC().Format(time.RFC3339Nano)
	if ttl := declaredTTL(m); ttl > 0 {
		r.TTL = ttl.String()
		r.Expires = ver.Time().Add(ttl).UTC().Format(time.RFC3339Nano)
	}
}

// facts is the one-line summary get prints on stderr for a declared key:
// declaration, parameters, version and what its TTL implies.
func facts(m *schemaval.Match, ver hlc.HLC, now time.Time) string {
	var b strings.Builder
	b.WriteString(describe(m))
	for _, p := range m.Params {
		fmt.Fprintf(&b, " %s=%s", p.Param.Name, p.Text)
	}
	fmt.Fprintf(&b, "; version %s, written %s", ver, ver.Time().UTC().Format(time.RFC3339Nano))
	if ttl := declaredTTL(m); ttl > 0 {
		exp := ver.Time().Add(ttl)
		fmt.Fprintf(&b, "; ttl %s: expires by %s", ttl, exp.UTC().Format(time.RFC3339Nano))
		if left := exp.Sub(now).Round(time.Millisecond); left > 0 {
			fmt.Fprintf(&b, " (in %s)", left)
		}
		b.WriteString(" if written with that ttl")
	} else if m.Lock == nil {
		b.WriteString("; no ttl")
	}
	return b.String()
}

// writeJSONLine writes obj as one line of JSON.
func writeJSONLine(w interface{ Write([]byte) (int, error) }, obj any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// encodeArg turns a value given on the command line (or in --file) into
// the bytes the declared key stores, or explains why it does not fit.
func encodeArg(m *schemaval.Match, subject, input string) ([]byte, error) {
	c := m.Codec()
	v, err := c.ParseInput(input)
	if err == nil {
		var b []byte
		if b, err = c.Encode(v); err == nil {
			return b, nil
		}
	}
	return nil, usageErrorf("%s is %s: %v (nothing was sent)", subject, describe(m), err)
}
