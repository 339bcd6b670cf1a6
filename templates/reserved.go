package templates

import (
	"fmt"

	"github.com/ssgen/ssgen/schema"
)

// checkReserved refuses schema names that would collide with what the
// generated file declares besides them. The schema package already keeps
// schema names apart from each other.
func checkReserved(s *schema.Schema) error {
	pkg := map[string]string{
		"Store": "the store type", "New": "the store constructor",
	}
	for _, t := range s.Types {
		if t.Kind == schema.KindEnum {
			pkg["Parse"+t.Name] = "the parser of enum " + t.Name
		}
	}
	// What a group with parameters adds: its Params struct in the package,
	// its lister and watcher on the Store.
	store := map[string]string{"Client": "the store's Client method"}
	for _, g := range s.Groups {
		if len(g.Params) == 0 {
			continue
		}
		pkg[paramsType(g)] = "the parameters struct of group " + g.Name
		store[listerName(g)] = "the lister of group " + g.Name
		store[watcherName(g)] = "the watcher of group " + g.Name
		fields := map[string]bool{}
		for _, p := range g.Params {
			if fields[paramField(p)] {
				return fmt.Errorf("%s: group %s: parameter %s: %w (its field %s in %s is another parameter's)", p.Pos, g.Name, p.Name, ErrReservedName, paramField(p), paramsType(g))
			}
			fields[paramField(p)] = true
		}
	}
	for _, op := range allOwnedParams(s) {
		if op.p.Regexp != nil {
			pkg[patternVar(op.owner, op.p)] = "a pattern variable"
		}
	}
	check := func(name string, pos schema.Pos, what string) error {
		if by, ok := pkg[name]; ok {
			return fmt.Errorf("%s: %s %s: %w (%s)", pos, what, name, ErrReservedName, by)
		}
		return nil
	}
	for _, t := range s.Types {
		if err := check(t.Name, t.Pos, "type"); err != nil {
			return err
		}
		for _, v := range t.Values {
			if err := check(v.GoName, v.Pos, "enum value"); err != nil {
				return err
			}
		}
	}
	for _, g := range s.Groups {
		if err := check(g.Name, g.Pos, "group"); err != nil {
			return err
		}
	}
	onStore := func(name string, pos schema.Pos, what string) error {
		if by, ok := store[name]; ok {
			return fmt.Errorf("%s: %s %s: %w (%s)", pos, what, name, ErrReservedName, by)
		}
		return nil
	}
	for _, k := range s.Keys {
		if err := onStore(k.Name, k.Pos, "key"); err != nil {
			return err
		}
	}
	for _, l := range s.Locks {
		if err := onStore(l.Name, l.Pos, "lock"); err != nil {
			return err
		}
	}
	for _, g := range s.Groups {
		if err := onStore(g.Name, g.Pos, "group"); err != nil {
			return err
		}
	}
	return nil
}
