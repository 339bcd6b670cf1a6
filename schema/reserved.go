package schema

// checkReserved reports every schema name that meets a name the generated
// code declares itself (gonames.go): in the package (the store type, its
// constructor, enum parsers, the Params struct of each group with
// parameters), on the Store (its Client method, group listers, watchers
// and multi-gets) and in a Params struct (two parameters with one field name).
// checkNames has already kept the schema's names apart from each other.
func (l *loader) checkReserved() {
	s := l.s
	pkg := map[string]string{
		StoreTypeName:      "the store type",
		NewFuncName:        "the store constructor",
		MigrationsFuncName: "the migration entry point",
	}
	for _, t := range s.Types {
		if t.Kind == KindEnum {
			pkg[t.ParserName()] = "the parser of enum " + t.Name
		}
	}
	store := map[string]string{ClientMethodName: "the Store's Client method"}
	for _, g := range s.Groups {
		if len(g.Params) == 0 {
			continue
		}
		pkg[g.ParamsTypeName()] = "the parameters struct of group " + g.Name
		store[g.ListerName()] = "the lister of group " + g.Name
		store[g.WatcherName()] = "the watcher of group " + g.Name
		fields := map[string]*Param{}
		for _, p := range g.Params {
			if first, dup := fields[p.FieldName()]; dup {
				l.errs.add(p.Pos, "group %s: parameter %s: its field %s in %s is already parameter %s's (at %s); rename one", g.Name, p.Name, p.FieldName(), g.ParamsTypeName(), first.Name, note(first.Pos))
				continue
			}
			fields[p.FieldName()] = p
		}
	}
	// Multi-gets can also meet each other: group A's key BC and group AB's
	// key C both spell GetABCs.
	for _, g := range s.Groups {
		for _, k := range g.Keys {
			if !k.HasGetter() {
				continue
			}
			name := k.GetterName()
			if by, ok := store[name]; ok {
				l.errs.add(k.Pos, "key %s: its multi-get %s is already %s; rename one", k.QualifiedName(), name, by)
				continue
			}
			store[name] = "the multi-get of key " + k.QualifiedName()
		}
	}
	reserved := func(names map[string]string, name string, pos Pos, what string) {
		if by, ok := names[name]; ok {
			l.errs.add(pos, "%s %s: the name is reserved by the generated code (%s); rename it", what, name, by)
		}
	}
	for _, t := range s.Types {
		reserved(pkg, t.Name, t.Pos, "type")
		for _, v := range t.Values {
			reserved(pkg, v.GoName, v.Pos, "enum value")
		}
	}
	for _, g := range s.Groups {
		reserved(pkg, g.Name, g.Pos, "group")
		reserved(store, g.Name, g.Pos, "group")
	}
	for _, k := range s.Keys {
		reserved(store, k.Name, k.Pos, "key")
	}
	for _, lk := range s.Locks {
		reserved(store, lk.Name, lk.Pos, "lock")
	}
}
