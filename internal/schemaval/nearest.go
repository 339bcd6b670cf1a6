package schemaval

import (
	"fmt"
	"strings"

	"github.com/ssgen/ssgen/internal/suggest"
	"github.com/ssgen/ssgen/schema"
)

// Miss says why a key is no declaration: the declaration it comes
// closest to, and the first thing about the key that does not fit it.
type Miss struct {
	// Name is the declaration's qualified name ("Thermostat.Reading").
	Name string
	// Path is the declaration's full path template.
	Path schema.Path
	// Lock reports whether the declaration is a lock.
	Lock bool
	// Why is the first misfit, for a message ("\"Kitchen\" does not match
	// {id}'s pattern ^[a-z0-9-]+$"); user text in it is quoted and bounded.
	Why string
}

// Nearest returns the declaration key comes closest to and why it is not
// that declaration, for a key Resolve did not match; false when the schema
// declares nothing. Closest is the most segments that fit, then the
// fewest segments more or less, then a misspelt literal over another one,
// then declaration order.
func (r *Resolver) Nearest(key string) (Miss, bool) {
	segs := strings.Split(key, "/")
	best, bestScore := Miss{}, 0
	found := false
	for _, d := range r.all {
		score, why := d.fit(segs)
		if found && score <= bestScore {
			continue
		}
		name := ""
		if d.lock != nil {
			name = d.lock.QualifiedName()
		} else {
			name = d.key.QualifiedName()
		}
		best, bestScore, found = Miss{Name: name, Path: d.path, Lock: d.lock != nil, Why: why}, score, true
	}
	return best, found
}

// fit scores how well segs fit the declaration (higher is closer) and
// names the first misfit.
func (d *decl) fit(segs []string) (int, string) {
	score, why := 0, ""
	miss := func(s string) {
		if why == "" {
			why = s
		}
	}
	for i, s := range d.path.Segments {
		if i >= len(segs) {
			break
		}
		seg := segs[i]
		switch {
		case s.Param == nil && seg == s.Literal:
			score += 4
		case s.Param == nil:
			if suggest.DidYouMean(seg, []string{s.Literal}) != "" {
				score++
			}
			miss(fmt.Sprintf("segment %d is %s where the path has %q", i+1, quoteShort(seg), s.Literal))
		default:
			if _, ok := ParseParam(s.Param, seg); ok {
				score += 4
			} else {
				score += 2 // a value in a parameter's place is closer than a wrong literal
				miss(paramMisfit(s.Param, seg))
			}
		}
	}
	if n, m := len(d.path.Segments), len(segs); n != m {
		score -= 4 * max(n-m, m-n)
		miss(fmt.Sprintf("the key has %d segments, the path %d", m, n))
	}
	return score, why
}

// paramMisfit says why seg is not a value of parameter p.
func paramMisfit(p *schema.Param, seg string) string {
	name := "{" + p.Name + "}"
	k := p.Type.Kind
	switch {
	case seg == "":
		return name + " is empty"
	case k == schema.KindString && p.Regexp != nil:
		return fmt.Sprintf("%s does not match %s's pattern %s", quoteShort(seg), name, p.Pattern)
	case k == schema.KindEnum:
		vals := make([]string, len(p.Type.Def.Values))
		for i, ev := range p.Type.Def.Values {
			vals[i] = ev.Value
		}
		return fmt.Sprintf("%s is not a %s for %s (want one of %s)", quoteShort(seg), p.Type.Def.Name, name, quoteList(vals))
	case k.IsInteger():
		return fmt.Sprintf("%s does not fit %s (%s in decimal, no leading zero or '+')", quoteShort(seg), name, k)
	}
	return fmt.Sprintf("%s is not a value of %s", quoteShort(seg), name)
}
