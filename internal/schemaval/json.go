package schemaval

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ssgen/ssgen/schema"
)

// maxJSONDepth bounds the nesting ParseJSON follows, as encoding/json
// bounds its own, so that hostile input cannot exhaust the stack.
const maxJSONDepth = 10000

// ParseJSON reads one JSON value for Codec.Encode: objects become
// map[string]any, arrays []any, numbers json.Number (kept exact, so that a
// uint64 or a float32 is read as written), strings, booleans and null
// themselves. An object with a member named twice, anything after the
// value, and nesting deeper than encoding/json allows are errors.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, nil, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Msg: fmt.Sprintf("not one JSON value: more follows at byte %d", dec.InputOffset()), Err: err}
	}
	return v, nil
}

func parseValue(dec *json.Decoder, p *path, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, &Error{Path: p.String(), Msg: fmt.Sprintf("JSON nests deeper than %d levels", maxJSONDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(p, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, jsonSyntax(p, err)
			}
			k := kt.(string) // encoding/json returns only strings here
			if _, dup := m[k]; dup {
				return nil, &Error{Path: p.keyOf(k).String(), Msg: "member given twice"}
			}
			if m[k], err = parseValue(dec, p.keyOf(k), depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonSyntax(p, err)
		}
		return m, nil
	case '[':
		l := []any{}
		for dec.More() {
			v, err := parseValue(dec, p.indexOf(len(l)), depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, jsonSyntax(p, err)
		}
		return l, nil
	}
	return nil, &Error{Path: p.String(), Msg: fmt.Sprintf("not JSON: unexpected %q", d)}
}

func jsonSyntax(p *path, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Path: p.String(), Msg: "not JSON: it ends too early", Err: err}
	}
	return &Error{Path: p.String(), Msg: "not JSON: " + causeText(err), Err: err}
}

// ParseInput reads a value typed by a person, on a command line or in a
// form field: JSON, as ParseJSON reads it, except that for a type whose
// JSON form is a string (string, enum, time, duration, bytes, a go_type
// stored as text) input that is not a JSON string is the string itself.
// So `heat` and `"heat"` both give the enum value heat, and `21.5` gives
// the string "21.5" for a string type; a string that itself starts and
// ends with a double quote must be written as JSON.
func (c *Codec) ParseInput(s string) (any, error) {
	if c.stringForm() {
		v, err := ParseJSON([]byte(s))
		if err == nil {
			if _, isNum := v.(json.Number); isNum && c.t.Kind == schema.KindDuration {
				return v, nil // nanoseconds
			}
			if str, ok := v.(string); ok {
				return str, nil
			}
		}
		return s, nil
	}
	return ParseJSON([]byte(s))
}

// Member is one field of an Object.
type Member struct {
	Name  string
	Value any
}

// Object is a decoded struct: its fields in declaration order, those the
// generated code would leave out (empty optional fields) left out. It
// marshals as a JSON object in that order.
type Object []Member

// Get returns the value of the field name and whether it is present.
func (o Object) Get(name string) (any, bool) {
	for _, m := range o {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the fields in order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(m.Name)
		b = append(append(b, k...), ':')
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// Text returns the plain text of a decoded scalar: a string as it is, a
// number in the shortest form that reads back the same, true or false,
// bytes in base64 (standard, padded: their JSON form without the quotes).
// ok is false for a struct, list, map or null.
func Text(v any) (text string, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case []byte:
		if v == nil {
			return "", false
		}
		return base64.StdEncoding.EncodeToString(v), true
	}
	return "", false
}
