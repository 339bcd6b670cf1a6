package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/server/engine"
)

// Limits stop Read early, before a snapshot too large for the store that
// will load it has been read to its end. Zero fields are unlimited.
type Limits struct {
	MaxKeys  int   // keys
	MaxBytes int64 // sum of key and value lengths
}

// Read reads one snapshot from r, which must hold nothing else (white
// space aside), and checks everything a file can get wrong: JSON syntax,
// UTF-8, the format and version, unknown or repeated top-level fields and
// unknown entry fields, each entry's encodings, versions, fencing token
// and ttl, empty keys. It returns the first problem, wrapping ErrInvalid
// (and an *engine.ItemError for a problem in an entry, naming it as
// keys[i] with its key); a snapshot beyond lim, wrapping
// engine.ErrQuotaExceeded; or the error of r itself. What depends on the store (limits of one key, duplicates,
// stamps ahead of its clock, quotas of the result) is checked by
// engine.Import.
//
// Memory is proportional to the snapshot's keys and values: r is read
// through a buffer, never whole, but one JSON string (a value) is held
// whole while it is read; bound r (io.LimitReader, http.MaxBytesReader)
// when it comes from someone else.
func Read(r io.Reader, lim Limits) (engine.Snapshot, error) {
	var s engine.Snapshot
	u := &utf8Reader{r: r}
	dec := json.NewDecoder(u)
	dec.DisallowUnknownFields()
	fail := func(err error) (engine.Snapshot, error) {
		if u.err != nil { // the bytes were not UTF-8, whatever the decoder made of them
			err = u.err
		}
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, ErrInvalid) || errors.Is(err, engine.ErrQuotaExceeded):
			return engine.Snapshot{}, err
		case errors.As(err, &syn):
			return engine.Snapshot{}, fmt.Errorf("%w: JSON syntax at byte %d: %v", ErrInvalid, syn.Offset, err)
		case errors.As(err, &typ):
			return engine.Snapshot{}, fmt.Errorf("%w: at byte %d: %v", ErrInvalid, typ.Offset, err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return engine.Snapshot{}, fmt.Errorf("%w: the file ends early (at byte %d)", ErrInvalid, dec.InputOffset())
		}
		// The reader's own failure, not the file's.
		return engine.Snapshot{}, fmt.Errorf("reading the snapshot: %w", err)
	}
	if err := expectDelim(dec, '{', "a JSON object"); err != nil {
		return fail(err)
	}
	seen := map[string]bool{}
	var format string
	var version int
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		name, _ := tok.(string)
		if seen[name] {
			return fail(fmt.Errorf("%w: field %q appears twice", ErrInvalid, name))
		}
		seen[name] = true
		switch name {
		case "format":
			if err := dec.Decode(&format); err != nil {
				return fail(err)
			}
			if format != Format {
				return fail(fmt.Errorf("%w: \"format\" is %q, not %q: not an ssgen snapshot", ErrInvalid, format, Format))
			}
		case "version":
			if err := dec.Decode(&version); err != nil {
				return fail(err)
			}
			if version != Version {
				return fail(fmt.Errorf("%w: version %d; this ssgen reads version %d (a later ssgen writes later versions)", ErrInvalid, version, Version))
			}
		case "taken":
			var t string
			if err := dec.Decode(&t); err != nil {
				return fail(err)
			}
			if s.Taken, err = time.Parse(time.RFC3339Nano, t); err != nil {
				return fail(fmt.Errorf("%w: \"taken\" %q: want an RFC 3339 time", ErrInvalid, t))
			}
		case "clock":
			var c string
			if err := dec.Decode(&c); err != nil {
				return fail(err)
			}
			if s.Clock, err = parseHLC("clock", c); err != nil {
				return fail(fmt.Errorf("%w: %v", ErrInvalid, err))
			}
		case "keys":
			if s.Items, err = readKeys(dec, lim); err != nil {
				return fail(err)
			}
		default:
			return fail(fmt.Errorf("%w: unknown field %q", ErrInvalid, name))
		}
	}
	if err := expectDelim(dec, '}', "the end of the object"); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("%w: more data after the snapshot (at byte %d)", ErrInvalid, dec.InputOffset())
		}
		return fail(err)
	}
	if u.err != nil {
		return fail(u.err)
	}
	for _, f := range []string{"format", "version", "keys"} {
		if !seen[f] {
			return fail(fmt.Errorf("%w: %q is missing", ErrInvalid, f))
		}
	}
	return s, nil
}

// readKeys reads the "keys" array, one entry at a time.
func readKeys(dec *json.Decoder, lim Limits) ([]engine.Item, error) {
	if err := expectDelim(dec, '[', `"keys" to be an array`); err != nil {
		return nil, err
	}
	// Items are gathered in chunks and copied once into a slice of the
	// exact length: append's growth (a quarter at a time for large slices)
	// allocated five times the final slice, which for a million tiny keys
	// was most of the memory an import took.
	var (
		chunks [][]engine.Item
		chunk  []engine.Item
		count  int
	)
	var size int64
	for i := 0; dec.More(); i++ {
		var e entryIn
		if err := dec.Decode(&e); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) || isFieldError(err) {
				return nil, fmt.Errorf("%w: %w", ErrInvalid, &engine.ItemError{Index: i, Err: errors.New(trimJSON(err))})
			}
			return nil, err
		}
		it, err := e.decode()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, &engine.ItemError{Index: i, Key: it.Key, Err: err})
		}
		size += int64(len(it.Key) + len(it.Value))
		switch {
		case lim.MaxKeys > 0 && count >= lim.MaxKeys:
			return nil, fmt.Errorf("the snapshot holds more than %d keys, the server's quota: %w", lim.MaxKeys, engine.ErrQuotaExceeded)
		case lim.MaxBytes > 0 && size > lim.MaxBytes:
			return nil, fmt.Errorf("the snapshot holds more than %d bytes of keys and values, the server's quota: %w", lim.MaxBytes, engine.ErrQuotaExceeded)
		}
		if len(chunk) == cap(chunk) {
			if chunk != nil {
				chunks = append(chunks, chunk)
			}
			chunk = make([]engine.Item, 0, min(max(2*cap(chunk), 64), readChunk))
		}
		chunk = append(chunk, it)
		count++
	}
	if err := expectDelim(dec, ']', `the end of "keys"`); err != nil {
		return nil, err
	}
	items := make([]engine.Item, 0, count)
	for _, c := range chunks {
		items = append(items, c...)
	}
	return append(items, chunk...), nil
}

// readChunk is the most items readKeys gathers in one chunk.
const readChunk = 4096

// isFieldError reports the decoder's unknown-field error (it has no type).
func isFieldError(err error) bool {
	return strings.HasPrefix(err.Error(), "json: unknown field ")
}

// trimJSON drops the decoder's "json: " prefix and Go type names from an
// entry's error: "unknown field \"kye\"", "cannot unmarshal number into
// \"value\"".
func trimJSON(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return fmt.Sprintf(`want an object with "key" and "value", not a JSON %s`, typ.Value)
		}
		return fmt.Sprintf("%q: want a %s, not a JSON %s", typ.Field, strings.TrimPrefix(typ.Type.String(), "*"), typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%w: want %s at byte %d, found %s", ErrInvalid, what, dec.InputOffset(), describe(tok))
	}
	return nil
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// utf8Reader passes r through while checking that it is UTF-8: the JSON
// decoder would turn invalid bytes in a string into U+FFFD, silently
// changing a text key or value. The first invalid byte sets err (read
// with Read's result) and ends the stream.
type utf8Reader struct {
	r    io.Reader
	pend [utf8.UTFMax]byte // the start of a character split between reads
	np   int
	off  int64 // bytes checked
	err  error
}

func (u *utf8Reader) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	n, err := u.r.Read(p)
	b := p[:n]
	// Complete a character left over from the previous read.
	for u.np > 0 && len(b) > 0 {
		u.pend[u.np] = b[0]
		u.np++
		b = b[1:]
		if utf8.FullRune(u.pend[:u.np]) {
			if r, size := utf8.DecodeRune(u.pend[:u.np]); r == utf8.RuneError && size == 1 {
				return u.invalid(0)
			}
			u.off += int64(u.np)
			u.np = 0
		}
	}
	if u.np > 0 { // this read did not complete it
		if err == io.EOF {
			return u.invalid(0)
		}
		return n, err
	}
	// Hold back an incomplete character at the end.
	end := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				end = i
			}
			break
		}
	}
	if !utf8.Valid(b[:end]) {
		for i := 0; i < end; {
			r, size := utf8.DecodeRune(b[i:end])
			if r == utf8.RuneError && size == 1 {
				return u.invalid(int64(i))
			}
			i += size
		}
	}
	u.off += int64(end)
	u.np = copy(u.pend[:], b[end:])
	if err == io.EOF && u.np > 0 {
		return u.invalid(0)
	}
	return n, err
}

func (u *utf8Reader) invalid(at int64) (int, error) {
	u.err = fmt.Errorf("%w: not UTF-8 (an invalid byte at or near byte %d); JSON files are UTF-8, and binary keys and values are written with encoding base64", ErrInvalid, u.off+at)
	return 0, u.err
}
