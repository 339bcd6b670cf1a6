package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Severity tells a breaking change (SeverityError) from one that deserves a
// look but keeps stored data readable (SeverityWarning).
type Severity int

const (
	SeverityError Severity = iota
	SeverityWarning
)

func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// MarshalText spells the severity in JSON output.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// The rule ids of Compare. docs/schema.md explains each.
const (
	RulePackageChanged       = "package-changed"
	RuleKeyRemoved           = "key-removed"
	RuleKeyRenamed           = "key-renamed"
	RuleKeyPathChanged       = "key-path-changed"
	RuleKeyParamChanged      = "key-param-changed"
	RuleKeyParamOrderChanged = "key-param-order-changed"
	RuleParamPatternChanged  = "param-pattern-changed"
	RuleKeyTypeChanged       = "key-type-changed"
	RuleKeyEncodingChanged   = "key-encoding-changed"
	RuleKeyTTLRemoved        = "key-ttl-removed"
	RuleKeyGuardRemoved      = "key-guard-removed"
	RuleKeyGuardChanged      = "key-guard-changed"
	RuleKeyGuardAdded        = "key-guard-added"
	RuleLockRemoved          = "lock-removed"
	RuleLockRenamed          = "lock-renamed"
	RuleLockPathChanged      = "lock-path-changed"
	RuleFieldRemoved         = "field-removed"
	RuleFieldRenamed         = "field-wire-name-changed"
	RuleFieldTypeChanged     = "field-type-changed"
	RuleFieldNowRequired     = "field-now-required"
	RuleFieldAddedRequired   = "field-added-required"
	RuleEnumValueRemoved     = "enum-value-removed"
	RuleFieldRenamedFrom     = "field-renamed"
	RuleFieldDefaultChanged  = "field-default-changed"
	RuleFieldNameReused      = "field-name-reused"
	RuleEnumValueRenamed     = "enum-value-renamed"
	RuleEnumParamRenamed     = "enum-param-value-renamed"
	RuleKeyMoved             = "key-moved"
	RuleTypeKindChanged      = "type-kind-changed"
	RuleGoTypeChanged        = "go-type-changed"
	RuleParamTypeChanged     = "param-type-changed"
	RuleGrantWidened         = "grant-widened"
	RuleGrantNarrowed        = "grant-narrowed"
	RuleTypeVersioned        = "type-version-written"
	RuleTypeVersionRemoved   = "type-version-removed"
	RuleFieldRuleAdded       = "field-transition-rule-added"
)

// Change is one difference between two versions of a schema that breaks
// stored data or callers. Pos is in the new schema, or in the old one for
// something removed.
type Change struct {
	Rule     string
	Severity Severity
	Pos      Pos
	Msg      string
}

// String formats the change like a compiler diagnostic:
// "file:line:col: error[key-removed]: message".
func (c Change) String() string {
	return fmt.Sprintf("%s: %s[%s]: %s", c.Pos, c.Severity, c.Rule, c.Msg)
}

// MarshalJSON flattens the position for tools reading the JSON output.
func (c Change) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Rule     string   `json:"rule"`
		Severity Severity `json:"severity"`
		File     string   `json:"file"`
		Line     int      `json:"line"`
		Column   int      `json:"column"`
		Message  string   `json:"message"`
	}{c.Rule, c.Severity, c.Pos.Filename, c.Pos.Line, c.Pos.Col, c.Msg})
}

// Compare lists the changes from old to new that break stored data or
// callers, or change who may do what. Adding keys, locks, types, optional
// fields, enum values and TTLs is not a change. The changes come in file
// order: those about the whole file first, then those in the new file by
// position, then those located in the old file (something removed) by
// position there.
func Compare(old, new *Schema) []Change {
	c := &comparer{}
	if old.Package != new.Package {
		c.add(RulePackageChanged, SeverityWarning, new.Filename, "package changed from %s to %s; importers must follow", old.Package, new.Package)
	}
	c.types(old, new)
	c.locks(old, new)
	c.keys(old, new)
	c.grants(old, new)
	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i].Pos, c.out[j].Pos
		if ra, rb := fileRank(a, new), fileRank(b, new); ra != rb {
			return ra < rb
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return c.out
}

// fileRank orders positions: the whole file, then the new file, then the
// old one.
func fileRank(p Pos, new *Schema) int {
	switch {
	case p.Line == 0:
		return 0
	case p.Filename == new.Filename:
		return 1
	}
	return 2
}

type comparer struct {
	out []Change
	// reported holds parameters already reported, so that a changed group
	// parameter is reported once, not once per key and lock of the group.
	reported map[string]bool
}

func (c *comparer) once(rule string, p *Param) bool {
	if c.reported == nil {
		c.reported = map[string]bool{}
	}
	id := rule + "\x00" + p.Pos.String()
	if c.reported[id] {
		return false
	}
	c.reported[id] = true
	return true
}

func (c *comparer) add(rule string, sev Severity, at any, format string, a ...any) {
	var p Pos
	switch v := at.(type) {
	case Pos:
		p = v
	case string:
		p = Pos{Filename: v}
	}
	c.out = append(c.out, Change{Rule: rule, Severity: sev, Pos: p, Msg: fmt.Sprintf(format, a...)})
}

func (c *comparer) types(old, new *Schema) {
	for _, ot := range old.Types {
		nt := new.Type(ot.Name)
		if nt == nil {
			continue // keys and fields that used it report their own change
		}
		if ot.Kind != nt.Kind {
			c.add(RuleTypeKindChanged, SeverityError, nt.Pos, "type %s changed from %s to %s; stored values no longer decode", ot.Name, ot.Kind, nt.Kind)
			continue
		}
		switch ot.Kind {
		case KindStruct:
			c.structVersions(ot, nt)
		case KindEnum:
			c.enumValues(ot, nt, paramUses(new, nt))
		case KindGoType:
			if ot.GoType != nil && nt.GoType != nil && *ot.GoType != *nt.GoType {
				c.add(RuleGoTypeChanged, SeverityError, nt.Pos, "type %s: go_type changed from %s to %s", ot.Name, ot.GoType, nt.GoType)
			}
		}
	}
}

// structVersions compares the versions of a struct: each version the
// older schema reads with the same version in the newer one, and a type
// that became versioned by its oldest version (which values stored before
// versioning read as).
func (c *comparer) structVersions(ot, nt *TypeDef) {
	switch {
	case ot.Version == 0 && nt.Version == 0:
		c.fields(ot, nt)
	case ot.Version == 0:
		oldest := nt.VersionOf(nt.OldestVersion())
		c.fields(ot, oldest)
		if nt.WriteVersion != oldest.Version {
			c.add(RuleTypeVersioned, SeverityWarning, nt.Pos, "type %s writes version %d; programs built from the older schema read its values as version %d's fields and miss the changed ones (write_version: %d keeps writing what they read until they are upgraded)", nt.Name, nt.WriteVersion, oldest.Version, oldest.Version)
		}
	case nt.Version == 0:
		c.add(RuleTypeVersionRemoved, SeverityError, nt.Pos, "type %s is no longer versioned; stored values of its earlier versions no longer read (keep version and previous)", nt.Name)
	default:
		for _, od := range append(append([]*TypeDef(nil), ot.Previous...), ot) {
			nd := nt.VersionOf(od.Version)
			if nd == nil {
				c.add(RuleTypeVersionRemoved, SeverityError, nt.Pos, "type %s: version %d is no longer declared; stored values of it no longer read (keep it under previous until no stored value is of version %d)", nt.Name, od.Version, od.Version)
				continue
			}
			c.fields(od, nd)
		}
		if ot.VersionOf(nt.WriteVersion) == nil {
			c.add(RuleTypeVersioned, SeverityWarning, nt.Pos, "type %s writes version %d, which programs built from the older schema do not read (codec.ErrVersion); upgrade the readers first, writing version %d (write_version) meanwhile", nt.Name, nt.WriteVersion, ot.WriteVersion)
		}
	}
}

func (c *comparer) fields(ot, nt *TypeDef) {
	for _, of := range ot.Fields {
		nf := findField(nt, func(f *Field) bool { return f.Name == of.Name })
		if nf == nil {
			nf = findField(nt, func(f *Field) bool { return renamedFrom(f.RenamedFrom, of.Name) })
			switch {
			case nf != nil:
				c.add(RuleFieldRenamedFrom, SeverityWarning, nf.Pos, "field %s.%s was renamed from %q (renamed_from): stored values read; programs built from the older schema read it as the zero value until they are upgraded", nt.Name, nf.Name, of.Name)
			case isRemoved(nt, of.Name):
				continue // dropped on purpose: stored data under it is ignored
			default:
				if byGo := findField(nt, func(f *Field) bool { return f.GoName == of.GoName }); byGo != nil {
					c.add(RuleFieldRenamed, SeverityError, byGo.Pos, "field %s.%s: wire name changed from %q to %q; stored values lose it (add renamed_from: %s to it if this is a rename)", ot.Name, of.GoName, of.Name, byGo.Name, of.Name)
				} else {
					c.add(RuleFieldRemoved, SeverityError, nt.Pos, "field %s.%s was removed; stored values lose it and older readers miss it (%s)", ot.Name, of.Name, removalHint(ot, nt, of))
				}
				continue
			}
		}
		if of.Type != nil && nf.Type != nil && !typeCompatible(of.Type, nf.Type) {
			hint := ""
			if nt.Version == 0 && nt.Of == nil {
				hint = fmt.Sprintf(" (if stored values must keep reading, make %s a versioned type: version: 2, with its earlier fields under previous: {1: {fields: …}}, and convert in Go)", nt.Name)
			}
			c.add(RuleFieldTypeChanged, SeverityError, nf.Pos, "field %s.%s: type changed from %s to %s; stored values no longer decode%s", ot.Name, of.Name, of.Type, nf.Type, hint)
		}
		if of.Optional && !nf.Optional && nf.Default == nil {
			c.add(RuleFieldNowRequired, SeverityWarning, nf.Pos, "field %s.%s is no longer optional; stored values without it read as the zero value (give it a default if that is wrong)", ot.Name, of.Name)
		}
		if nf.Immutable && !of.Immutable {
			c.add(RuleFieldRuleAdded, SeverityWarning, nf.Pos, "field %s.%s is now immutable; existing writers that change or drop it will be refused (by read-modify-writes and an enforcing ssgen serve)", nt.Name, nf.Name)
		}
		if nf.Monotonic != "" && (of.Monotonic == "" || of.Monotonic == MonotonicNonDecreasing && nf.Monotonic == MonotonicIncreasing) {
			c.add(RuleFieldRuleAdded, SeverityWarning, nf.Pos, "field %s.%s is now monotonic (%s); existing writers that move it %s will be refused (by read-modify-writes and an enforcing ssgen serve)", nt.Name, nf.Name, nf.Monotonic, map[Monotonic]string{MonotonicIncreasing: "down or keep it", MonotonicNonDecreasing: "down"}[nf.Monotonic])
		}
		if of.Default != nil && nf.Default != nil && of.Default.JSON != nf.Default.JSON || of.Default != nil && nf.Default == nil {
			c.add(RuleFieldDefaultChanged, SeverityWarning, nf.Pos, "field %s.%s: default changed; stored values without the field read differently", nt.Name, nf.Name)
		}
	}
	for _, nf := range nt.Fields {
		if findField(ot, func(f *Field) bool { return f.Name == nf.Name || f.GoName == nf.GoName }) != nil {
			continue
		}
		if isRemoved(ot, nf.Name) {
			c.add(RuleFieldNameReused, SeverityError, nf.Pos, "field %s.%s reuses a name the older schema lists in removed; stored values may hold the old field's data under it", nt.Name, nf.Name)
			continue
		}
		if nf.Optional || nf.Default != nil || findField(ot, func(f *Field) bool { return renamedFrom(nf.RenamedFrom, f.Name) }) != nil {
			continue
		}
		c.add(RuleFieldAddedRequired, SeverityWarning, nf.Pos, "field %s.%s is new and required; stored values without it read as the zero value (give it a default, or make it optional)", nt.Name, nf.Name)
	}
}

// removalHint says which declaration would make a field's removal
// accepted: renamed_from on a new field of the same type, if there is
// one, else removed.
func removalHint(ot, nt *TypeDef, of *Field) string {
	for _, nf := range nt.Fields {
		if findField(ot, func(f *Field) bool { return f.Name == nf.Name }) != nil || len(nf.RenamedFrom) > 0 {
			continue
		}
		if of.Type != nil && nf.Type != nil && of.Type.String() == nf.Type.String() {
			return fmt.Sprintf("add renamed_from: %s to field %s if this is a rename, or list it in removed if it is dropped on purpose", of.Name, nf.Name)
		}
	}
	return fmt.Sprintf("list it in removed: [%s] of type %s if it is dropped on purpose", of.Name, nt.Name)
}

func renamedFrom(names []Name, name string) bool {
	for _, n := range names {
		if n.Name == name {
			return true
		}
	}
	return false
}

func isRemoved(t *TypeDef, name string) bool { return renamedFrom(t.Removed, name) }

// paramUses returns the qualified names of the keys and locks of s with
// a path parameter of enum type t.
func paramUses(s *Schema, t *TypeDef) []string {
	var out []string
	uses := func(ps []*Param) bool {
		for _, p := range ps {
			if p.Type != nil && p.Type.Kind == KindEnum && p.Type.Def == t {
				return true
			}
		}
		return false
	}
	for _, k := range s.AllKeys() {
		if uses(k.AllParams()) {
			out = append(out, k.QualifiedName())
		}
	}
	for _, l := range s.AllLocks() {
		if uses(l.AllParams()) {
			out = append(out, l.QualifiedName())
		}
	}
	return out
}

func (c *comparer) enumValues(ot, nt *TypeDef, params []string) {
	for _, ov := range ot.Values {
		if hasEnumValue(nt, ov.Value) {
			continue
		}
		if nv := findEnumValue(nt, func(v *EnumValue) bool { return renamedFrom(v.RenamedFrom, ov.Value) }); nv != nil {
			if len(params) > 0 {
				c.add(RuleEnumParamRenamed, SeverityError, nv.Pos, "enum %s: value %q was renamed from %q, and %s has a path parameter of this enum: keys stored under the old spelling (%q) are not moved, and no accessor reaches them any more; migrate them to the new spelling (read each, write it under %q, delete the old key) before the new schema goes live, or keep the old value", nt.Name, nv.Value, ov.Value, strings.Join(params, ", "), ov.Value, nv.Value)
				continue
			}
			c.add(RuleEnumValueRenamed, SeverityWarning, nv.Pos, "enum %s: value %q was renamed from %q (renamed_from): stored values read; programs built from the older schema refuse the new spelling until they are upgraded", nt.Name, nv.Value, ov.Value)
			continue
		}
		hint := ""
		if nv := findEnumValue(nt, func(v *EnumValue) bool { return !hasEnumValue(ot, v.Value) && len(v.RenamedFrom) == 0 }); nv != nil {
			hint = fmt.Sprintf(" (add renamed_from: %s to value %s if this is a rename)", yamlScalar(ov.Value), yamlScalar(nv.Value))
		}
		c.add(RuleEnumValueRemoved, SeverityError, nt.Pos, "enum %s: value %q was removed; stored values holding it no longer decode%s", ot.Name, ov.Value, hint)
	}
}

// yamlScalar writes s as it can be written in a schema: as is when it is a
// plain word, else double-quoted.
func yamlScalar(s string) string {
	if validWireName(s) && s != "true" && s != "false" && s != "null" && s != "off" && s != "on" && s != "yes" && s != "no" {
		return s
	}
	return strconv.Quote(s)
}

func findEnumValue(t *TypeDef, match func(*EnumValue) bool) *EnumValue {
	for _, v := range t.Values {
		if match(v) {
			return v
		}
	}
	return nil
}

func findField(t *TypeDef, match func(*Field) bool) *Field {
	for _, f := range t.Fields {
		if match(f) {
			return f
		}
	}
	return nil
}

func hasEnumValue(t *TypeDef, v string) bool {
	for _, ev := range t.Values {
		if ev.Value == v {
			return true
		}
	}
	return false
}

// entry is what keys and locks share for comparison.
type entry struct {
	kind   string // "key" or "lock"
	name   string // qualified
	group  *Group
	path   Path
	params []*Param
	pos    Pos
	moved  []Path // a key's earlier full paths (renamed_from); empty when none
}

func keyEntry(k *Key) entry {
	return entry{"key", k.QualifiedName(), k.Group, k.FullPath(), k.AllParams(), k.Pos, k.FullMovedFroms()}
}

func lockEntry(l *Lock) entry {
	return entry{"lock", l.QualifiedName(), l.Group, l.FullPath(), l.AllParams(), l.Pos, nil}
}

// movedIndex returns the index in moved of a path naming the same keys
// as p, or -1.
func movedIndex(moved []Path, p Path) int {
	for i, m := range moved {
		if samePath(m, p) {
			return i
		}
	}
	return -1
}

// renamedFromHint spells the renamed_from that keeps every one of paths
// (a key's full paths in the older schema, its path first) readable from
// a key of group g: "renamed_from: old" or "renamed_from: [old, older]";
// "" when one of them does not lie under g's path.
func renamedFromHint(paths []Path, g *Group) string {
	var owns []string
	for _, p := range paths {
		own, ok := ownPath(p, g)
		if !ok {
			return ""
		}
		owns = append(owns, strconv.Quote(own))
	}
	if len(owns) == 1 {
		return "renamed_from: " + owns[0]
	}
	return "renamed_from: [" + strings.Join(owns, ", ") + "]"
}

// ownPath returns old, a key's earlier full path, relative to g's path:
// what the key's renamed_from would say, when old lies under g's path.
func ownPath(old Path, g *Group) (string, bool) {
	if g == nil {
		return old.String(), true
	}
	n := len(g.Path.Segments)
	if len(old.Segments) <= n || !samePath(Path{Segments: old.Segments[:n]}, g.Path) {
		return "", false
	}
	return Path{Segments: old.Segments[n:]}.String(), true
}

// samePath reports whether two paths name the same keys: the same
// literals, parameters in the same places (their names do not matter).
func samePath(a, b Path) bool {
	if len(a.Segments) != len(b.Segments) {
		return false
	}
	for i := range a.Segments {
		as, bs := a.Segments[i], b.Segments[i]
		if (as.Param == nil) != (bs.Param == nil) || as.Param == nil && as.Literal != bs.Literal {
			return false
		}
	}
	return true
}

func (c *comparer) locks(old, new *Schema) {
	newByName := map[string]*Lock{}
	for _, l := range new.AllLocks() {
		newByName[l.QualifiedName()] = l
	}
	oldNames := map[string]bool{}
	for _, l := range old.AllLocks() {
		oldNames[l.QualifiedName()] = true
	}
	var added []entry
	for _, l := range new.AllLocks() {
		if !oldNames[l.QualifiedName()] {
			added = append(added, lockEntry(l))
		}
	}
	for _, ol := range old.AllLocks() {
		oe := lockEntry(ol)
		nl := newByName[ol.QualifiedName()]
		if nl == nil {
			if ne, ok := renamed(oe, added); ok {
				c.add(RuleLockRenamed, SeverityWarning, ne.pos, "lock %s was renamed to %s; callers must follow, holders keep the same key", oe.name, ne.name)
				c.path(oe, ne, RuleLockPathChanged)
				continue
			}
			c.add(RuleLockRemoved, SeverityError, ol.Pos, "lock %s (%s) was removed; running holders of it no longer exclude anyone", oe.name, oe.path)
			continue
		}
		c.path(oe, lockEntry(nl), RuleLockPathChanged)
	}
}

func (c *comparer) keys(old, new *Schema) {
	newByName := map[string]*Key{}
	for _, k := range new.AllKeys() {
		newByName[k.QualifiedName()] = k
	}
	oldNames := map[string]bool{}
	for _, k := range old.AllKeys() {
		oldNames[k.QualifiedName()] = true
	}
	var added []entry
	addedKeys := map[string]*Key{}
	for _, k := range new.AllKeys() {
		if !oldNames[k.QualifiedName()] {
			added = append(added, keyEntry(k))
			addedKeys[k.QualifiedName()] = k
		}
	}
	for _, ok := range old.AllKeys() {
		oe := keyEntry(ok)
		nk := newByName[ok.QualifiedName()]
		if nk == nil {
			ne, found := renamed(oe, added)
			if !found {
				c.add(RuleKeyRemoved, SeverityError, ok.Pos, "key %s (%s) was removed; its stored values are orphaned", oe.name, oe.path)
				continue
			}
			c.add(RuleKeyRenamed, SeverityWarning, ne.pos, "key %s was renamed to %s; callers must follow, stored values stay readable", oe.name, ne.name)
			nk = addedKeys[ne.name]
		}
		c.key(ok, nk)
	}
}

// renamed finds among the added entries one at the same path as o: the
// same key under a new Go name.
func renamed(o entry, added []entry) (entry, bool) {
	for _, n := range added {
		if o.path.String() == n.path.String() || movedIndex(n.moved, o.path) >= 0 {
			return n, true
		}
	}
	return entry{}, false
}

func (c *comparer) key(ok, nk *Key) {
	name := nk.QualifiedName()
	c.path(keyEntry(ok), keyEntry(nk), RuleKeyPathChanged)
	if ok.Type != nil && nk.Type != nil && !typeCompatible(ok.Type, nk.Type) {
		c.add(RuleKeyTypeChanged, SeverityError, nk.Type.Pos, "key %s: type changed from %s to %s; stored values no longer decode", name, ok.Type, nk.Type)
	}
	if ok.Encoding != nk.Encoding {
		c.add(RuleKeyEncodingChanged, SeverityError, nk.Pos, "key %s: encoding changed from %s to %s; stored values no longer decode", name, ok.Encoding, nk.Encoding)
	}
	if ok.TTL > 0 && nk.TTL == 0 {
		c.add(RuleKeyTTLRemoved, SeverityWarning, nk.Pos, "key %s: ttl %s was removed; values now persist until deleted", name, ok.TTL)
	}
	switch {
	case ok.Guard != nil && nk.Guard == nil:
		c.add(RuleKeyGuardRemoved, SeverityError, nk.Pos, "key %s: guard %s was removed; writers stop fencing, and the service rejects their unfenced writes to a key that holds a token", name, ok.Guard.QualifiedName())
	case ok.Guard != nil && ok.Guard.QualifiedName() != nk.Guard.QualifiedName() && ok.Guard.FullPath().String() != nk.Guard.FullPath().String():
		// A guard that kept its name but moved is reported as a lock path change.
		c.add(RuleKeyGuardChanged, SeverityError, nk.Pos, "key %s: guard changed from %s (%s) to %s (%s); old and new writers no longer exclude each other", name, ok.Guard.QualifiedName(), ok.Guard.FullPath(), nk.Guard.QualifiedName(), nk.Guard.FullPath())
	case ok.Guard == nil && nk.Guard != nil:
		c.add(RuleKeyGuardAdded, SeverityWarning, nk.Pos, "key %s: guard %s was added; once a fenced write lands, writers built from the old schema are rejected", name, nk.Guard.QualifiedName())
	}
}

// path compares where an entry's values live and how its accessor takes
// its arguments.
func (c *comparer) path(o, n entry, pathRule string) {
	if i := movedIndex(n.moved, o.path); !samePath(o.path, n.path) && i >= 0 {
		mv := n.moved[i]
		c.add(RuleKeyMoved, SeverityWarning, mv.Pos, "%s %s moved from %s to %s (renamed_from): stored values read and move on their next write; programs built from the older schema do not see values written under the new path", n.kind, n.name, o.path, n.path)
		// Values the older schema still read at its own earlier paths
		// have not all moved yet: dropping those paths orphans them.
		for _, om := range o.moved {
			if movedIndex(n.moved, om) < 0 {
				c.add(RuleKeyPathChanged, SeverityError, mv.Pos, "%s %s: renamed_from no longer lists %s, where the older schema still read values; those not yet moved are orphaned (keep the earlier paths in the list: %s)", n.kind, n.name, om, renamedFromHint(append([]Path{o.path}, o.moved...), n.group))
				break
			}
		}
		n.path = mv // its parameters are compared where the old ones were
	}
	os, ns := o.path.Segments, n.path.Segments
	if !samePath(o.path, n.path) {
		hint := ""
		if n.kind == "key" {
			if h := renamedFromHint(append([]Path{o.path}, o.moved...), n.group); h != "" {
				hint = fmt.Sprintf(" (add %s to the key if it moved)", h)
			}
		}
		c.add(pathRule, SeverityError, n.path.Pos, "%s %s: path changed from %s to %s; values stored under the old path are orphaned%s", n.kind, n.name, o.path, n.path, hint)
		return
	}
	for i := range os {
		op, np := os[i].Param, ns[i].Param
		if op == nil || op.Type == nil || np.Type == nil {
			continue
		}
		owner := n.kind + " " + n.name
		if n.group != nil && findParam(n.group.Params, np.Name) == np {
			owner = "group " + n.group.Name
		}
		switch {
		case !paramCompatible(op, np):
			if c.once(RuleKeyParamChanged, np) {
				c.add(RuleKeyParamChanged, SeverityError, np.Pos, "%s: parameter %s changed from %s to %s; some stored keys can no longer be addressed", owner, np.Name, op.Type, np.Type)
			}
		case op.Type.String() != np.Type.String():
			if c.once(RuleParamTypeChanged, np) {
				c.add(RuleParamTypeChanged, SeverityWarning, np.Pos, "%s: parameter %s changed from %s to %s; stored keys stay addressable, but the generated accessors change signature, so callers must follow", owner, np.Name, op.Type, np.Type)
			}
		}
		if np.Pattern != "" && np.Pattern != op.Pattern && c.once(RuleParamPatternChanged, np) {
			c.add(RuleParamPatternChanged, SeverityWarning, np.Pos, "%s: parameter %s now must match %q; stored keys outside it can no longer be addressed", owner, np.Name, np.Pattern)
		}
	}
	if order(o) != order(n) {
		c.add(RuleKeyParamOrderChanged, SeverityError, n.path.Pos, "%s %s: parameters reordered (%s); callers passing them by position now address other keys", n.kind, n.name, paramNames(n.params))
	}
}

// order is the path segment each parameter fills, in argument order.
func order(e entry) string {
	var b strings.Builder
	for _, p := range e.params {
		for i, s := range e.path.Segments {
			if s.Param == p {
				fmt.Fprintf(&b, "%d,", i)
			}
		}
	}
	return b.String()
}

func paramNames(ps []*Param) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// paramCompatible reports whether every segment the old parameter could
// render, the new one can render too.
func paramCompatible(o, n *Param) bool {
	ok, nk := o.Type.Kind, n.Type.Kind
	switch {
	case nk == KindString:
		return true
	case ok.IsInteger() && nk.IsInteger():
		return intWidens(ok, nk)
	case ok == KindEnum && nk == KindEnum:
		if o.Type.Def.Name == n.Type.Def.Name {
			return true // enum-value-removed reports a shrinking enum
		}
		for _, v := range o.Type.Def.Values {
			if !hasEnumValue(n.Type.Def, v.Value) {
				return false
			}
		}
		return true
	}
	return false
}

// typeCompatible reports whether values stored as o decode as n.
func typeCompatible(o, n *Type) bool {
	return compatible(o, n, map[[2]*TypeDef]bool{})
}

func compatible(o, n *Type, seen map[[2]*TypeDef]bool) bool {
	switch {
	case o.Kind == n.Kind && o.Def == nil && o.Elem == nil:
		return true
	case o.Kind.IsInteger() && n.Kind.IsInteger():
		return intWidens(o.Kind, n.Kind)
	case o.Kind == KindFloat32 && n.Kind == KindFloat64:
		return true
	case o.Kind == KindEnum && n.Kind == KindString:
		return true
	case (o.Kind == KindList || o.Kind == KindMap) && o.Kind == n.Kind:
		return compatible(o.Elem, n.Elem, seen)
	case o.Def != nil && n.Def != nil && o.Def.Name == n.Def.Name:
		return true // the type's own rules report what changed in it
	case o.Def != nil && n.Def != nil && o.Kind == n.Kind:
		pair := [2]*TypeDef{o.Def, n.Def}
		if seen[pair] {
			return true
		}
		seen[pair] = true
		return defsCompatible(o.Def, n.Def, seen)
	}
	return false
}

// defsCompatible compares two differently named declared types by
// structure: names are not on the wire.
func defsCompatible(o, n *TypeDef, seen map[[2]*TypeDef]bool) bool {
	switch o.Kind {
	case KindEnum:
		for _, v := range o.Values {
			if !hasEnumValue(n, v.Value) {
				return false
			}
		}
		return true
	case KindGoType:
		return o.GoType != nil && n.GoType != nil && *o.GoType == *n.GoType
	}
	for _, of := range o.Fields {
		nf := findField(n, func(f *Field) bool { return f.Name == of.Name })
		if nf == nil || of.Type == nil || nf.Type == nil || !compatible(of.Type, nf.Type, seen) {
			return false
		}
	}
	return true
}

var intBits = map[Kind]int{KindInt: 64, KindInt8: 8, KindInt16: 16, KindInt32: 32, KindInt64: 64,
	KindUint: 64, KindUint8: 8, KindUint16: 16, KindUint32: 32, KindUint64: 64}

// intWidens reports whether every value of integer kind o fits kind n.
func intWidens(o, n Kind) bool {
	ob, nb := intBits[o], intBits[n]
	switch {
	case o.IsSigned() == n.IsSigned():
		return nb >= ob
	case !o.IsSigned():
		return nb > ob // unsigned into a wider signed
	}
	return false // negative values do not fit an unsigned kind
}
