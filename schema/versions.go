package schema

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// VersionField is the reserved field name of the version stamp that
// values of a versioned type carry (codec.VersionField): no field may use
// it.
const VersionField = "$v"

// MaxTypeVersion bounds a declared version (codec.MaxVersion).
const MaxTypeVersion = 1 << 16

// PreviousName returns the Go name of version v of the versioned type
// name: SetPoint's version 1 is SetPointV1.
func PreviousName(name string, v int) string { return name + "V" + strconv.Itoa(v) }

// ConvertFuncName returns the name of the function the user writes to
// bring version pv of a versioned type to its newest version:
// convertSetPointV1.
func (pv *TypeDef) ConvertFuncName() string { return "convert" + pv.Name }

// ConvertBackFuncName returns the name of the function the user writes
// to bring the newest version of a versioned type to version pv, needed
// when pv is the type's write_version: convertSetPointToV1.
func (pv *TypeDef) ConvertBackFuncName() string {
	return "convert" + pv.Of.Name + "ToV" + strconv.Itoa(pv.Version)
}

// CopyFuncName returns the name of the generated function that fills the
// fields version pv and the newest share (same wire name, Go name and
// type): copySetPointV1.
func (pv *TypeDef) CopyFuncName() string { return "copy" + pv.Name }

// CopyBackFuncName is CopyFuncName's reverse: copySetPointToV1.
func (pv *TypeDef) CopyBackFuncName() string {
	return "copy" + pv.Of.Name + "ToV" + strconv.Itoa(pv.Version)
}

// SharedFields returns the fields of previous version pv that the newest
// version has too, with the same wire name, Go name and type, in pv's
// order, each paired with the newest version's field.
func (pv *TypeDef) SharedFields() [][2]*Field {
	var out [][2]*Field
	for _, f := range pv.Fields {
		for _, g := range pv.Of.Fields {
			if f.Name == g.Name && f.GoName == g.GoName && f.Type != nil && g.Type != nil && f.Type.String() == g.Type.String() && f.Optional == g.Optional {
				out = append(out, [2]*Field{f, g})
			}
		}
	}
	return out
}

// VersionOf returns the declared version v of t (t itself when v is
// t.Version), or nil.
func (t *TypeDef) VersionOf(v int) *TypeDef {
	if v == t.Version {
		return t
	}
	for _, pv := range t.Previous {
		if pv.Version == v {
			return pv
		}
	}
	return nil
}

// OldestVersion returns the version of a stored value without a stamp:
// the oldest declared one.
func (t *TypeDef) OldestVersion() int {
	if len(t.Previous) > 0 {
		return t.Previous[0].Version
	}
	return t.Version
}

var previousFields = []string{"doc", "fields"}

// typeVersions reads version, previous and write_version of a type.
func (l *loader) typeVersions(td *TypeDef, ps []pair) {
	var versionN, previousN, writeN *pair
	for i := range ps {
		switch ps[i].name {
		case "version":
			versionN = &ps[i]
		case "previous":
			previousN = &ps[i]
		case "write_version":
			writeN = &ps[i]
		}
	}
	what := "type " + td.Name
	if versionN == nil {
		if len(ps) > 0 {
			l.errorf(ps[0].key, "%s: %s needs version (the type's current version number)", what, ps[0].name)
		}
		return
	}
	if td.Kind != KindStruct {
		l.errorf(versionN.key, "%s: version is for structs, and %s is not a struct", what, td.Name)
		return
	}
	v, ok := l.versionNumber(versionN.val, what+": version")
	if !ok {
		return
	}
	td.Version = v
	td.WriteVersion = v
	if previousN != nil {
		for _, p := range l.mapping(previousN.val, what+": previous") {
			pw := what + ": previous " + p.name
			pv, ok := l.versionNumber(p.key, pw)
			if !ok {
				continue
			}
			if pv >= v {
				l.errorf(p.key, "%s: a previous version must be below the type's version %d", pw, v)
				continue
			}
			prev := &TypeDef{Name: PreviousName(td.Name, pv), Kind: KindStruct, Pos: l.pos(p.key), Version: pv, Of: td}
			for _, q := range l.mapping(p.val, pw, previousFields...) {
				switch q.name {
				case "doc":
					prev.Doc, _ = l.str(q.val, pw+": doc")
				case "fields":
					prev.Fields = l.fields(prev, q.val)
				}
			}
			if prev.Fields == nil && p.val.Kind == yaml.MappingNode {
				l.errorf(p.val, "%s: fields is required", pw)
			}
			td.Previous = append(td.Previous, prev)
		}
		// Oldest first.
		for i := 1; i < len(td.Previous); i++ {
			for j := i; j > 0 && td.Previous[j].Version < td.Previous[j-1].Version; j-- {
				td.Previous[j], td.Previous[j-1] = td.Previous[j-1], td.Previous[j]
			}
		}
	}
	if writeN != nil {
		w, ok := l.versionNumber(writeN.val, what+": write_version")
		if !ok {
			return
		}
		if td.VersionOf(w) == nil {
			l.errorf(writeN.val, "%s: write_version %d is not a declared version (version %d, or one of previous)", what, w, v)
			return
		}
		td.WriteVersion = w
	}
}

// versionNumber reads a version written as a plain decimal number (YAML
// also reads "+2", "02" and "0x2" as integers; none of them is a version's
// one spelling).
func (l *loader) versionNumber(n *yaml.Node, what string) (int, bool) {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v < 1 || v > MaxTypeVersion || n.Value != strconv.Itoa(v) {
		l.errorf(n, "%s: want a version number from 1 to %d, got %s", what, MaxTypeVersion, describe(n))
		return 0, false
	}
	return v, true
}

// checkVersions enforces where versioned types may be used: as the type
// of a key with the msgpack or json encoding, not inside another type
// (its stamp is read from the stored value's top level); and the fields
// of previous versions read as written.
func (l *loader) checkVersions() {
	var inType func(t *Type) *TypeDef
	inType = func(t *Type) *TypeDef {
		switch {
		case t == nil:
			return nil
		case t.Kind == KindList || t.Kind == KindMap:
			return inType(t.Elem)
		case t.Kind == KindStruct && t.Def != nil && t.Def.Version > 0:
			return t.Def
		}
		return nil
	}
	nested := func(f *Field, owner string) {
		if d := inType(f.Type); d != nil {
			l.errs.add(f.Pos, "field %s.%s: versioned type %s can only be the type of a key, not of a field (its version stamp is read at the top of the stored value)", owner, f.Name, d.Name)
		}
	}
	for _, t := range l.s.Types {
		for _, f := range t.Fields {
			nested(f, t.Name)
		}
		for _, pv := range t.Previous {
			for _, f := range pv.Fields {
				nested(f, pv.Name)
				if len(f.RenamedFrom) > 0 || f.Default != nil {
					l.errs.add(f.Pos, "field %s.%s: a previous version's fields read as written: no renamed_from or default (the conversion function does that work)", pv.Name, f.Name)
				}
				if f.HasRules() {
					l.errs.add(f.Pos, "field %s.%s: transition rules (immutable, monotonic) belong on the current version's fields, which every write holds", pv.Name, f.Name)
				}
			}
		}
	}
	for _, k := range l.s.AllKeys() {
		d := inType(k.Type)
		if d == nil {
			continue
		}
		if k.Type.Kind != KindStruct {
			l.errs.add(k.Type.Pos, "key %s: versioned type %s can only be a key's type itself, not inside a list or map (its version stamp is read at the top of the stored value)", k.QualifiedName(), d.Name)
			continue
		}
		if k.Encoding != EncodingMsgpack && k.Encoding != EncodingJSON {
			l.errs.add(k.Type.Pos, "key %s: versioned type %s needs the msgpack or json encoding (the version stamp is a map field)", k.QualifiedName(), d.Name)
		}
	}
}
