package runtime

import (
	"context"
	"iter"
	"strconv"
	"strings"
)

// TemplateMember is one key or lock of a group, for NewTemplate: its
// schema name and its path relative to the group's path, where "{name}"
// segments are its own parameters.
type TemplateMember struct {
	Name string
	Path string
	// Earlier marks the earlier path of a key that moved (renamed_from):
	// a listing finds instances by it too, and a group watch reports its
	// events with GroupEvent.Earlier set.
	Earlier bool
}

// tseg is one segment of a path template: a literal, or a parameter.
type tseg struct {
	lit   string
	param bool
	name  string // the parameter's name
}

type tmember struct {
	name    string
	segs    []tseg
	earlier bool
}

// A Template is the shape of a group's keys, as generated code declares
// it: the group's path, whose "{name}" segments are its parameters, and
// the paths of its keys and locks below it. It turns the shape into a
// SCAN glob (Glob) and reads a listed key back into the group's parameter
// values (Match). A Template is immutable and safe for concurrent use.
type Template struct {
	path    string
	segs    []tseg
	nparams int
	members []tmember
	glob    string
}

// NewTemplate returns the Template of a group with path and members. It
// panics on a malformed path (an empty segment, or a '{' segment without
// its '}'): generated code passes the paths of a schema that loaded.
func NewTemplate(path string, members ...TemplateMember) *Template {
	t := &Template{path: path, segs: parseTemplate("NewTemplate", path)}
	for _, s := range t.segs {
		if s.param {
			t.nparams++
		}
	}
	for _, m := range members {
		t.members = append(t.members, tmember{name: m.Name, segs: parseTemplate("NewTemplate", m.Path), earlier: m.Earlier})
	}
	var b strings.Builder
	writeGlob(&b, t.segs)
	b.WriteByte('/')
	if len(t.members) == 1 {
		writeGlob(&b, t.members[0].segs)
	} else {
		b.WriteByte('*')
	}
	t.glob = b.String()
	return t
}

// parseTemplate reads a path template; fn names the caller in its panics.
func parseTemplate(fn, path string) []tseg {
	parts := strings.Split(path, "/")
	segs := make([]tseg, len(parts))
	for i, p := range parts {
		switch {
		case p == "":
			panic("runtime: " + fn + ": empty segment in " + strconv.Quote(path))
		case p[0] == '{':
			if len(p) < 3 || p[len(p)-1] != '}' {
				panic("runtime: " + fn + ": malformed parameter in " + strconv.Quote(path))
			}
			segs[i] = tseg{param: true, name: p[1 : len(p)-1]}
		default:
			segs[i] = tseg{lit: p}
		}
	}
	return segs
}

func writeGlob(b *strings.Builder, segs []tseg) {
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('/')
		}
		if s.param {
			b.WriteByte('*')
		} else {
			b.WriteString(GlobEscape(s.lit))
		}
	}
}

// Path is the group path the Template was built with.
func (t *Template) Path() string { return t.path }

// Glob is the ListKeys pattern of the group's keys: literal segments
// escaped with GlobEscape, each parameter a '*', followed by the single
// member's path the same way, or by '*' when the group has several. As '*'
// also matches '/', the glob can match keys the template does not: Match
// tells them apart.
func (t *Template) Glob() string { return t.glob }

// Match reads key as one of the group's keys: it returns the values of
// the group's parameters, in path order, and the name of the member the
// rest of the key is. ok is false for a key that does not have the
// group's literal segments, has an empty segment where a parameter goes,
// or whose rest is none of the members. Match checks the shape only:
// parameter types, patterns and enum values are for the caller (the
// generated parser) to check.
func (t *Template) Match(key string) (params []string, member string, ok bool) {
	params, _, m, ok := t.match(key)
	if !ok {
		return nil, "", false
	}
	return params, t.members[m].name, true
}

// match is Match that also returns the length of the group's prefix in
// key (the instance's identity) and the member's index.
func (t *Template) match(key string) (params []string, prefixLen, member int, ok bool) {
	rest := key
	params = make([]string, 0, t.nparams)
	for _, s := range t.segs {
		seg, tail, more := strings.Cut(rest, "/")
		if !more || seg == "" || (!s.param && seg != s.lit) {
			return nil, 0, 0, false
		}
		if s.param {
			params = append(params, seg)
		}
		rest = tail
	}
	prefixLen = len(key) - len(rest) - 1
	for i, m := range t.members {
		if matchSegs(rest, m.segs) {
			return params, prefixLen, i, true
		}
	}
	return nil, 0, 0, false
}

// matchSegs reports whether s is exactly segs: equal literals, non-empty
// segments where parameters go.
func matchSegs(s string, segs []tseg) bool {
	for i, sg := range segs {
		seg, tail, more := strings.Cut(s, "/")
		if more != (i < len(segs)-1) || seg == "" || (!sg.param && seg != sg.lit) {
			return false
		}
		s = tail
	}
	return true
}

// Instance is one instance of a group found by a listing: its parameters
// (the generated <Group>Params struct) and its handle.
type Instance[P, H any] struct {
	Params P
	Handle H
}

// A GroupListing lists the instances of a group: ListKeys over the
// Template's glob, each key read back with Match and the generated
// parser, each instance yielded once however many of its keys and locks
// exist. Generated code returns one from List<Group>s; see ListGroup.
type GroupListing[P, H any] struct {
	l       *Listing
	t       *Template
	parse   func(params []string) (P, H, error)
	seen    map[string]bool // instance prefix -> parsed
	skipped int
}

// ListGroup returns a listing of the instances of the group t describes.
// parse turns the parameter values Match found into the group's typed
// parameters and handle, or an error for a value the schema refuses (a
// type, pattern or enum mismatch): such keys, like keys whose shape is not
// the template's, are skipped, not errors. opts.From resumes an earlier
// listing of the same group.
func ListGroup[P, H any](c *Client, t *Template, opts ListOptions, parse func(params []string) (P, H, error)) *GroupListing[P, H] {
	return &GroupListing[P, H]{
		l: c.ListKeys(t.glob, opts), t: t, parse: parse, seen: map[string]bool{},
	}
}

// Cursor is where a new listing of the group resumes; as with
// Listing.Cursor, save it after handling an instance. A resumed listing
// never skips an instance but may yield again some of the instances of
// the page it resumes on (an instance whose keys span two pages, too).
func (g *GroupListing[P, H]) Cursor() Cursor { return g.l.Cursor() }

// Done reports whether the listing reached its last page.
func (g *GroupListing[P, H]) Done() bool { return g.l.Done() }

// Skipped is how many listed keys did not fit the group (their shape or a
// parameter value), so far.
func (g *GroupListing[P, H]) Skipped() int { return g.skipped }

// All yields each instance once, in the order their first key is listed.
// Errors are those of Listing.All, and end the iteration.
func (g *GroupListing[P, H]) All(ctx context.Context) iter.Seq2[Instance[P, H], error] {
	return func(yield func(Instance[P, H], error) bool) {
		for k, err := range g.l.All(ctx) {
			if err != nil {
				yield(Instance[P, H]{}, err)
				return
			}
			key := string(k)
			vals, n, _, ok := g.t.match(key)
			if !ok {
				g.skipped++
				continue
			}
			prefix := key[:n]
			if good, dup := g.seen[prefix]; dup {
				if !good {
					g.skipped++
				}
				continue
			}
			p, h, err := g.parse(vals)
			g.seen[prefix] = err == nil
			if err != nil {
				g.skipped++
				continue
			}
			if !yield(Instance[P, H]{Params: p, Handle: h}, nil) {
				return
			}
		}
	}
}
