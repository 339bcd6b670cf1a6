// Package schemastore is the schema published in the state store: the
// envelope `ssgen schema publish` writes under the reserved key Key, and
// its checks when a client (the shell verbs, the console) reads it back.
//
// Any client allowed to write Key can store anything there, so Decode
// treats the value as hostile input: it is bounded in size, must be the
// envelope, its digest must match, and the schema must load through the
// ordinary loader (which refuses YAML aliases). The schema is data only:
// nothing is generated or run from it.
package schemastore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/internal/textsafe"
	"github.com/ssgen/ssgen/schema"
)

// Key is the reserved key the schema is published under.
const Key = "$ssgen/schema"

// Format is the envelope's format number; Decode refuses any other.
const Format = 1

// The bounds: a schema file of at most MaxSchemaBytes is published, and a
// value of more than MaxEnvelopeBytes is refused unread.
const (
	MaxSchemaBytes   = 1 << 20
	MaxEnvelopeBytes = 2 << 20
	maxNameBytes     = 255
)

// Envelope is the stored value: JSON, one object.
type Envelope struct {
	Format    int    `json:"format"`
	Digest    string `json:"digest"`    // lowercase hex sha256 of Schema's bytes
	Name      string `json:"name"`      // the file's base name when published
	Published string `json:"published"` // RFC 3339, UTC
	Schema    string `json:"schema"`    // the schema file's text, byte for byte
}

// Error is a value under Key that is not a published schema, or a schema
// that cannot be published.
type Error struct {
	Reason string
	Err    error // ErrTooLarge, or nil
}

func (e *Error) Error() string { return Key + ": " + e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// ErrTooLarge is wrapped by the errors about a schema or value over the bounds.
var ErrTooLarge = errors.New("too large")

func errorf(format string, a ...any) error { return &Error{Reason: fmt.Sprintf(format, a...)} }

// Digest is the schema digest: the lowercase hex sha256 of the bytes.
func Digest(src []byte) string {
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

// Encode builds the envelope of the schema file src, named file, published
// at now. It does not load the schema (the caller has, to report its
// problems against the file); it refuses what Decode would refuse.
func Encode(file string, src []byte, now time.Time) ([]byte, error) {
	if len(src) > MaxSchemaBytes {
		return nil, &Error{Reason: fmt.Sprintf("the schema is %d bytes, more than the %d that can be published", len(src), MaxSchemaBytes), Err: ErrTooLarge}
	}
	if !utf8.Valid(src) {
		return nil, errorf("the schema is not UTF-8 text")
	}
	name := filepath.Base(file)
	if !plainName(name) {
		name = "schema.yaml"
	}
	env := Envelope{
		Format: Format, Digest: Digest(src), Name: name,
		Published: now.UTC().Format(time.RFC3339), Schema: string(src),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(b) > MaxEnvelopeBytes {
		return nil, &Error{Reason: fmt.Sprintf("the schema's envelope is %d bytes, more than %d (JSON escapes its control characters)", len(b), MaxEnvelopeBytes), Err: ErrTooLarge}
	}
	return b, nil
}

// Published is a schema read back from the store and checked.
type Published struct {
	Envelope
	Time   time.Time      // Published, parsed
	Schema *schema.Schema // loaded; its positions name Source
	Bytes  []byte         // the schema file's bytes (Envelope.Schema)
}

// Source is how positions in the published schema are named:
// `$ssgen/schema (published 2026-11-27T17:00:00Z)`.
func Source(t time.Time) string {
	return Key + " (published " + t.UTC().Format(time.RFC3339) + ")"
}

// Decode checks a value read from Key and loads its schema. Envelope
// problems are an *Error; schema problems a schema.ErrorList whose
// positions name Source. It never panics on any input.
func Decode(value []byte) (*Published, error) {
	if len(value) > MaxEnvelopeBytes {
		return nil, &Error{Reason: fmt.Sprintf("the value is %d bytes, more than the %d a published schema may be", len(value), MaxEnvelopeBytes), Err: ErrTooLarge}
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	var env Envelope
	if err := dec.Decode(&env); err != nil {
		return nil, errorf("not a published schema (want the JSON envelope ssgen schema publish writes): %s", clip(err.Error()))
	}
	if dec.More() {
		return nil, errorf("not a published schema: text after the JSON envelope")
	}
	if env.Format != Format {
		return nil, errorf("envelope format %d, this ssgen reads format %d", env.Format, Format)
	}
	if len(env.Schema) > MaxSchemaBytes {
		return nil, &Error{Reason: fmt.Sprintf("the schema is %d bytes, more than %d", len(env.Schema), MaxSchemaBytes), Err: ErrTooLarge}
	}
	src := []byte(env.Schema)
	if got := Digest(src); got != env.Digest {
		return nil, errorf("the schema's digest is %s, the envelope says %s: the value was changed or damaged since it was published", got, clip(fmt.Sprintf("%q", env.Digest)))
	}
	t, err := time.Parse(time.RFC3339, env.Published)
	if err != nil {
		return nil, errorf("published time %s is not RFC 3339", clip(fmt.Sprintf("%q", env.Published)))
	}
	if !plainName(env.Name) {
		return nil, errorf("the file name is longer than %d bytes, not UTF-8, or holds control, line-breaking or hidden characters", maxNameBytes)
	}
	s, err := schema.Load(Source(t), src)
	var list schema.ErrorList
	if errors.As(err, &list) {
		return nil, bounded(list, Source(t))
	}
	if err != nil {
		return nil, err
	}
	return &Published{Envelope: env, Time: t, Schema: s, Bytes: src}, nil
}

// plainName: the file name is shown as it is, so it is short, UTF-8,
// and holds nothing a terminal or a page would act on or hide.
func plainName(name string) bool {
	if len(name) > maxNameBytes || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if textsafe.Hidden(r) || textsafe.LineBreak(r) {
			return false
		}
	}
	return true
}

// maxProblems is how many of a published schema's problems Decode
// returns; each message is clipped too, as they quote the schema's text.
const maxProblems = 20

func bounded(list schema.ErrorList, source string) schema.ErrorList {
	out := make(schema.ErrorList, 0, min(len(list), maxProblems+1))
	for i, e := range list {
		if i == maxProblems {
			out = append(out, &schema.Error{Pos: schema.Pos{Filename: source}, Msg: fmt.Sprintf("%d more problems not shown", len(list)-maxProblems)})
			break
		}
		out = append(out, &schema.Error{Pos: e.Pos, Msg: clip(e.Msg)})
	}
	return out
}

// clip bounds text taken from the value for a message.
func clip(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s) + "..."
}
