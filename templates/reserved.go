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
	for _, k := range s.Keys {
		if k.Name == "Client" {
			return fmt.Errorf("%s: key %s: %w (the store's Client method)", k.Pos, k.Name, ErrReservedName)
		}
	}
	for _, l := range s.Locks {
		if l.Name == "Client" {
			return fmt.Errorf("%s: lock %s: %w (the store's Client method)", l.Pos, l.Name, ErrReservedName)
		}
	}
	for _, g := range s.Groups {
		if g.Name == "Client" {
			return fmt.Errorf("%s: group %s: %w (the store's Client method)", g.Pos, g.Name, ErrReservedName)
		}
	}
	return nil
}
