// Package snapshot is the file format of a state store snapshot: the whole
// store (every key with its value, version, fencing token, time left to
// live and durability, and the store's clock) as one JSON document, which
// `ssgen export` writes and `ssgen import` and `ssgen serve --seed` read.
// Write encodes an engine.Snapshot, Read decodes and checks one; the
// server's WriteSnapshot and ReadSnapshot put them on a running store.
//
// A snapshot looks like this (one key per line, in byte-wise key order):
//
//	{
//	  "format": "ssgen-snapshot",
//	  "version": 1,
//	  "taken": "2024-05-01T12:00:00.5Z",
//	  "clock": "001714564800500:00003:StateStore",
//	  "keys": [
//	    {"key":"greeting","value":"hello","encoding":"text","version":"001714564790000:00000:StateStore"},
//	    {"key":"AAE=","keyEncoding":"base64","value":"/w==","encoding":"base64","version":"001714564791000:00000:StateStore","ttl":"29.5s","persist":true}
//	  ]
//	}
//
// The reference, with every field and how an import treats it, is
// docs/snapshots.md.
package snapshot

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// Format and Version are the "format" and "version" of the files this
// package writes and reads. A later layout gets a higher version, which
// this one refuses rather than misreads.
const (
	Format  = "ssgen-snapshot"
	Version = 1
)

// Encodings of keys and values.
const (
	Text   = "text"   // the JSON string is the bytes (UTF-8)
	Base64 = "base64" // standard base64 with padding (RFC 4648, section 4)
)

// ErrInvalid wraps every problem Read finds in a snapshot. A problem with
// one key also wraps an *engine.ItemError naming it (errors.As).
var ErrInvalid = errors.New("invalid snapshot")

// entry is one key as written: the JSON of an engine.Item.
type entry struct {
	Key          string `json:"key"`
	KeyEncoding  string `json:"keyEncoding,omitempty"` // absent: text
	Value        string `json:"value"`
	Encoding     string `json:"encoding"`
	Version      string `json:"version,omitempty"`
	FencingToken string `json:"fencingToken,omitempty"`
	TTL          string `json:"ttl,omitempty"` // time left, Go duration syntax
	Persist      bool   `json:"persist,omitempty"`
}

// Write writes s as a snapshot file. Text keys and values (UTF-8 without
// control characters other than tab and line breaks) are written as text,
// the others as base64; TTLs as Go durations ("1m30s", exact to the
// nanosecond); Taken in RFC 3339 UTC.
func Write(w io.Writer, s engine.Snapshot) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, "{\n  \"format\": %q,\n  \"version\": %d,\n", Format, Version)
	if !s.Taken.IsZero() {
		fmt.Fprintf(bw, "  \"taken\": %q,\n", s.Taken.UTC().Format(time.RFC3339Nano))
	}
	if !s.Clock.IsZero() {
		if err := writeField(bw, "clock", s.Clock.String()); err != nil {
			return err
		}
	}
	bw.WriteString("  \"keys\": [")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<" stays "<": the file is read by people and programs, not browsers
	for i, it := range s.Items {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		buf.Reset()
		if err := enc.Encode(toEntry(it)); err != nil {
			return err
		}
		// Encode ends the entry with a newline; the separator goes first.
		if _, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); err != nil {
			return err
		}
	}
	if len(s.Items) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func writeField(bw *bufio.Writer, name, value string) error {
	v, err := json.Marshal(value)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(bw, "  %q: %s,\n", name, v)
	return err
}

func toEntry(it engine.Item) entry {
	e := entry{Value: string(it.Value), Encoding: Text, Key: it.Key, Persist: it.Persist}
	if !engine.IsText([]byte(it.Key)) {
		e.Key, e.KeyEncoding = base64.StdEncoding.EncodeToString([]byte(it.Key)), Base64
	}
	if !engine.IsText(it.Value) {
		e.Value, e.Encoding = base64.StdEncoding.EncodeToString(it.Value), Base64
	}
	if !it.Version.IsZero() {
		e.Version = it.Version.String()
	}
	if !it.Fence.IsZero() {
		e.FencingToken = it.Fence.String()
	}
	if it.TTL > 0 {
		e.TTL = it.TTL.String()
	}
	return e
}

// decode turns a read entry into an item, or says what is wrong with it.
func (e *entryIn) decode() (engine.Item, error) {
	var it engine.Item
	if e.Key == nil {
		return it, errors.New(`"key" is missing`)
	}
	key, err := decodeBytes("key", *e.Key, e.KeyEncoding)
	if err != nil {
		return it, err
	}
	it.Key = string(key)
	if len(key) == 0 {
		return it, engine.ErrKeyLengthZero
	}
	if e.Value == nil {
		return it, errors.New(`"value" is missing`)
	}
	if it.Value, err = decodeBytes("value", *e.Value, e.Encoding); err != nil {
		return it, err
	}
	if e.Version != nil {
		if it.Version, err = parseHLC("version", *e.Version); err != nil {
			return it, err
		}
	}
	if e.FencingToken != nil {
		if it.Fence, err = parseHLC("fencingToken", *e.FencingToken); err != nil {
			return it, err
		}
	}
	if e.TTL != nil {
		d, err := time.ParseDuration(*e.TTL)
		switch {
		case err != nil:
			return it, fmt.Errorf(`"ttl" %q: want a duration such as "250ms", "30s" or "1h5m"`, *e.TTL)
		case d <= 0:
			return it, fmt.Errorf(`"ttl" %q: must be positive (leave it out for a key that never expires)`, *e.TTL)
		}
		it.TTL = d
	}
	if e.Persist != nil {
		it.Persist = *e.Persist
	}
	return it, nil
}

// entryIn is an entry as read: nil fields were absent (or null).
type entryIn struct {
	Key          *string `json:"key"`
	KeyEncoding  *string `json:"keyEncoding"`
	Value        *string `json:"value"`
	Encoding     *string `json:"encoding"`
	Version      *string `json:"version"`
	FencingToken *string `json:"fencingToken"`
	TTL          *string `json:"ttl"`
	Persist      *bool   `json:"persist"`
}

// decodeBytes reads a key or value in its encoding (absent: text).
func decodeBytes(field, s string, encoding *string) ([]byte, error) {
	enc := Text
	if encoding != nil {
		enc = *encoding
	}
	switch enc {
	case Text:
		return []byte(s), nil
	case Base64:
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not standard padded base64: %v", field, err)
		}
		return b, nil
	}
	name := "encoding"
	if field == "key" {
		name = "keyEncoding"
	}
	return nil, fmt.Errorf("%q %s: want %q or %q", name, strconv.Quote(enc), Text, Base64)
}

func parseHLC(field, s string) (hlc.HLC, error) {
	h, err := hlc.Parse(s)
	if err != nil {
		return h, fmt.Errorf("%q %s: want an HLC such as \"001714564800000:00000:StateStore\" (%v)", field, strconv.Quote(s), err)
	}
	if h.IsZero() {
		return h, fmt.Errorf("%q %s: the zero HLC is no version", field, strconv.Quote(s))
	}
	return h, nil
}
