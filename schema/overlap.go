package schema

import "strconv"

// pathsOverlap reports whether some parameter values make a and b render
// to the same key string. A parameter value fills exactly one segment and
// never contains '/', so two paths can only meet segment by segment.
func pathsOverlap(a, b Path) bool {
	if len(a.Segments) != len(b.Segments) {
		return false
	}
	for i := range a.Segments {
		if !segmentsOverlap(a.Segments[i], b.Segments[i]) {
			return false
		}
	}
	return true
}

func segmentsOverlap(a, b Segment) bool {
	switch {
	case a.Param == nil && b.Param == nil:
		return a.Literal == b.Literal
	case a.Param == nil:
		return paramMatches(b.Param, a.Literal)
	case b.Param == nil:
		return paramMatches(a.Param, b.Literal)
	}
	return paramsOverlap(a.Param, b.Param)
}

// paramMatches reports whether the parameter can render as lit.
func paramMatches(p *Param, lit string) bool {
	if p.Type == nil {
		return true
	}
	switch k := p.Type.Kind; {
	case k == KindEnum:
		for _, v := range p.Type.Def.Values {
			if v.Value == lit {
				return true
			}
		}
		return false
	case k.IsInteger():
		return isCanonicalInt(k, lit)
	}
	return p.Regexp == nil || p.Regexp.MatchString(lit)
}

// paramsOverlap reports whether two parameters can render the same
// segment. Enum values are checked one by one; two patterns are not
// intersected, so they are taken to overlap (a false alarm is a schema to
// restructure, a missed one is corrupted data).
func paramsOverlap(a, b *Param) bool {
	if a.Type != nil && a.Type.Kind == KindEnum {
		a, b = b, a
	}
	if b.Type != nil && b.Type.Kind == KindEnum {
		for _, v := range b.Type.Def.Values {
			if paramMatches(a, v.Value) {
				return true
			}
		}
		return false
	}
	return true
}

// isCanonicalInt reports whether s is how strconv renders some value of
// integer kind k: no sign on zero, no '+', no leading zeros.
func isCanonicalInt(k Kind, s string) bool {
	bits := intBits[k]
	if k.IsSigned() {
		v, err := strconv.ParseInt(s, 10, bits)
		return err == nil && strconv.FormatInt(v, 10) == s
	}
	v, err := strconv.ParseUint(s, 10, bits)
	return err == nil && strconv.FormatUint(v, 10) == s
}
