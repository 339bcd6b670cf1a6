package schemastore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/schema"
)

const goodSchema = `version: 1
package: pub
keys:
  Count: {path: counter, type: int64, encoding: string}
`

var published = time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC)

// envelope is an envelope around src whose digest matches it, as a
// writer of the key who knows the format would build one.
func envelope(t testing.TB, src string, edit func(*Envelope)) []byte {
	t.Helper()
	env := Envelope{Format: Format, Digest: Digest([]byte(src)), Name: "ssgen.yaml", Published: published.Format(time.RFC3339), Schema: src}
	if edit != nil {
		edit(&env)
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	b, err := Encode("dir/ssgen.yaml", []byte(goodSchema), published)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "ssgen.yaml" || string(p.Bytes) != goodSchema || p.Digest != Digest([]byte(goodSchema)) || !p.Time.Equal(published) {
		t.Fatalf("decoded %+v", p.Envelope)
	}
	if len(p.Schema.AllKeys()) != 1 || p.Schema.Filename != "$ssgen/schema (published 2026-11-27T17:00:00Z)" {
		t.Fatalf("schema %q with %d keys", p.Schema.Filename, len(p.Schema.AllKeys()))
	}
}

// aliasBomb is the billion laughs: nine levels of nine aliases each.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("version: 1\npackage: pub\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		prev := "*l" + string(rune('0'+i-1))
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" + strings.Repeat(prev+", ", 8) + prev + "]\n")
	}
	return b.String()
}

// Each attack a writer of $ssgen/schema can make is refused with an error
// naming the key (or, for a schema that does not load, positions naming
// it), never a panic.
func TestDecodeRefusesWhatIsNotAPublishedSchema(t *testing.T) {
	deep := "version: 1\npackage: pub\nkeys: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	tests := []struct {
		name  string
		value []byte
		want  string // in the error
		list  bool   // a schema.ErrorList
	}{
		{"empty", nil, "not a published schema", false},
		{"not JSON", []byte("version: 1\n"), "not a published schema", false},
		{"malformed JSON", []byte(`{"format":1,"digest":`), "not a published schema", false},
		{"JSON then more", append(envelope(t, goodSchema, nil), []byte(" {}")...), "text after the JSON envelope", false},
		{"other format", envelope(t, goodSchema, func(e *Envelope) { e.Format = 2 }), "envelope format 2", false},
		{"tampered schema", envelope(t, goodSchema, func(e *Envelope) { e.Schema += "# changed\n" }), "digest", false},
		{"no digest", envelope(t, goodSchema, func(e *Envelope) { e.Digest = "" }), "digest", false},
		{"bad time", envelope(t, goodSchema, func(e *Envelope) { e.Published = "yesterday\x1b[2J" }), "not RFC 3339", false},
		{"long name", envelope(t, goodSchema, func(e *Envelope) { e.Name = strings.Repeat("n", 300) }), "file name", false},
		{"name with a bidi control", envelope(t, goodSchema, func(e *Envelope) { e.Name = "evil\u202eylm.yaml" }), "file name", false},
		{"name with a line break", envelope(t, goodSchema, func(e *Envelope) { e.Name = "a\nb" }), "file name", false},
		{"oversize value", make([]byte, MaxEnvelopeBytes+1), "more than the", false},
		{"oversize schema", envelope(t, strings.Repeat("#", MaxSchemaBytes+1), nil), "more than", false},
		{"schema with errors", envelope(t, "version: 1\npackage: pub\nkeys:\n  Bad: {path: x, type: nosuch}\n", nil), "$ssgen/schema (published 2026-11-27T17:00:00Z):4:", true},
		{"alias bomb", envelope(t, aliasBomb(), nil), "YAML aliases are not supported", true},
		{"deep nesting", envelope(t, deep, nil), "$ssgen/schema (published", true},
		{"not YAML", envelope(t, "\t{", nil), "invalid YAML", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Decode(tt.value)
			if err == nil {
				t.Fatalf("decoded %+v", p.Envelope)
			}
			var list schema.ErrorList
			var e *Error
			switch {
			case tt.list && !errors.As(err, &list):
				t.Fatalf("error %T %v, want a schema.ErrorList", err, err)
			case !tt.list && !errors.As(err, &e):
				t.Fatalf("error %T %v, want an *Error", err, err)
			case !tt.list && !strings.HasPrefix(err.Error(), Key+": "):
				t.Errorf("error %q does not name %s", err, Key)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if len(err.Error()) > (maxProblems+1)*(300+100) {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			if tt.name == "oversize value" || tt.name == "oversize schema" {
				if !errors.Is(err, ErrTooLarge) {
					t.Errorf("error %v is not ErrTooLarge", err)
				}
			}
		})
	}
}

func TestEncodeRefusesWhatDecodeWould(t *testing.T) {
	if _, err := Encode("big.yaml", []byte(strings.Repeat("#", MaxSchemaBytes+1)), published); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversize schema: %v", err)
	}
	if _, err := Encode("bin.yaml", []byte("version: 1\xff\n"), published); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("non-UTF-8 schema: %v", err)
	}
	// The worst case for JSON: every byte escaped as \u00XX, six times
	// its size, over the envelope's bound.
	if _, err := Encode("ctl.yaml", []byte(strings.Repeat("\x01", MaxSchemaBytes)), published); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a schema whose envelope is too large: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(envelope(f, goodSchema, nil))
	f.Add(envelope(f, aliasBomb(), nil))
	f.Add(envelope(f, "version: 1\npackage: pub\nkeys: {A: {path: a, type: [[[int]]]}}\n", nil))
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":1,"digest":"x","schema":"\u0000"}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		p, err := Decode(value)
		if err == nil && (p.Schema == nil || Digest(p.Bytes) != p.Digest) {
			t.Fatalf("accepted %q without a schema whose digest matches", value)
		}
	})
}

// A fuzzed schema text inside a valid envelope: the loader's bounds hold.
func FuzzDecodeSchemaText(f *testing.F) {
	f.Add(goodSchema)
	f.Add(aliasBomb())
	f.Fuzz(func(t *testing.T, src string) {
		_, _ = Decode(envelope(t, src, nil))
	})
}
