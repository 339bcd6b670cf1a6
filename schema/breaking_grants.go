package schema

import (
	"sort"
	"strings"
)

// grants compares what each role may do, by the stored keys it reaches
// (kind and full path, so that a renamed key keeps its grants) and by who
// it names. More access is grant-widened (a warning: review who gains
// what), less is grant-narrowed (an error: running clients lose access
// they may use).
func (c *comparer) grants(old, new *Schema) {
	for _, or := range old.Roles {
		nr := new.Role(or.Name)
		if nr == nil {
			c.add(RuleGrantNarrowed, SeverityError, or.Pos, "role %s was removed; the clients it named lose all their access", or.Name)
			continue
		}
		c.principals(or, nr)
		oa, na := roleAccess(or), roleAccess(nr)
		for _, id := range sortedIDs(oa, na) {
			o, n := oa[id], na[id]
			what := n.what
			if what == "" {
				what = o.what
			}
			if lost := o.access &^ n.access; lost != 0 {
				c.add(RuleGrantNarrowed, SeverityError, nr.Pos, "role %s may no longer %s %s (%s)", or.Name, accessWords(lost, id), what, pathOf(id))
			}
			if gained := n.access &^ o.access; gained != 0 {
				c.add(RuleGrantWidened, SeverityWarning, nr.Pos, "role %s may now %s %s (%s)", or.Name, accessWords(gained, id), what, pathOf(id))
			}
		}
	}
	for _, nr := range new.Roles {
		if old.Role(nr.Name) == nil {
			c.add(RuleGrantWidened, SeverityWarning, nr.Pos, "role %s is new: %s", nr.Name, roleSummary(nr))
		}
	}
}

// principals reports who a role names, added or dropped.
func (c *comparer) principals(or, nr *Role) {
	diff := func(kind string, o, n []string) {
		for _, x := range n {
			if !contains(o, x) {
				c.add(RuleGrantWidened, SeverityWarning, nr.Pos, "role %s now also names %s %q", nr.Name, kind, x)
			}
		}
		for _, x := range o {
			if !contains(n, x) {
				c.add(RuleGrantNarrowed, SeverityError, nr.Pos, "role %s no longer names %s %q", nr.Name, kind, x)
			}
		}
	}
	diff("client id", or.ClientIDs, nr.ClientIDs)
	diff("user", or.Usernames, nr.Usernames)
	diff("attributes", attrStrings(or.Attributes), attrStrings(nr.Attributes))
}

func attrStrings(sets []Attributes) []string {
	var out []string
	for _, set := range sets {
		kv := make([]string, len(set))
		for i, a := range set {
			kv[i] = a.Name + "=" + a.Value
		}
		sort.Strings(kv)
		out = append(out, strings.Join(kv, ", "))
	}
	return out
}

type reach struct {
	what   string // "key Thermostat.SetPoint"
	access Access
}

// roleAccess maps "key PATH" or "lock PATH" to the role's access there.
func roleAccess(r *Role) map[string]reach {
	out := map[string]reach{}
	for _, p := range r.Permissions() {
		kind := "key "
		if p.Lock != nil {
			kind = "lock "
		}
		out[kind+p.Path().String()] = reach{p.What(), p.Access}
	}
	return out
}

func sortedIDs(a, b map[string]reach) []string {
	var ids []string
	for id := range a {
		ids = append(ids, id)
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func pathOf(id string) string { _, p, _ := strings.Cut(id, " "); return p }

// accessWords names access to a key (read, write) or a lock (see the
// holder of, take).
func accessWords(a Access, id string) string {
	lock := strings.HasPrefix(id, "lock ")
	switch {
	case lock && a&AccessWrite != 0:
		return "take"
	case lock:
		return "see the holder of"
	case a == AccessReadWrite:
		return "read and write"
	case a == AccessWrite:
		return "write"
	}
	return "read"
}

func roleSummary(r *Role) string {
	var parts []string
	for _, v := range []Verb{VerbRead, VerbWrite, VerbLock} {
		var names []string
		for _, g := range r.Grants {
			if g.Verb == v {
				names = append(names, g.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, v.String()+" "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
