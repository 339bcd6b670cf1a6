package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
)

const migratePkg = "github.com/ssgen/ssgen/runtime/migrate"

// migrated returns the keys of s whose stored values a migration rewrites
// (schemaval.RewritesOf), in AllKeys order.
func migrated(s *schema.Schema) []*schema.Key {
	var out []*schema.Key
	for _, k := range s.AllKeys() {
		if schemaval.RewritesOf(k).Any() {
			out = append(out, k)
		}
	}
	return out
}

// emitMigrations declares the package's migration entry point: one
// migrate.For per key that migrates, with the key's own codec, so that
// migrate.Apply runs the user's conversions of versioned types (which
// ssgen migrate cannot), and, for a guarded key, its guard lock's path
// (Decl.GuardedBy), so that Apply rewrites it under the lock's lease.
// Nothing is declared when no key migrates.
func emitMigrations(f *jen.File, s *schema.Schema) {
	keys := migrated(s)
	if len(keys) == 0 {
		return
	}
	comment(f, schema.MigrationsFuncName+" returns the declarations whose stored values runtime/migrate rewrites to the form this package writes: each key whose type evolves (renamed_from, default) or has earlier versions, with its codec, so that the conversion functions of versioned types run, and a guarded key with its guard lock, under whose lease it is rewritten. Pass it to migrate.Apply or migrate.Validate (docs/generated-api.md, \"Migrations\").")
	f.Func().Id(schema.MigrationsFuncName).Params().Index().Qual(migratePkg, "Decl").Block(
		jen.Return(jen.Index().Qual(migratePkg, "Decl").ValuesFunc(func(g *jen.Group) {
			for _, k := range keys {
				glob, exact := k.FullPath().Glob()
				pattern := jen.Lit(glob)
				if exact {
					pattern = jen.Qual(runtimePkg, "GlobEscape").Call(jen.Lit(glob))
				}
				decl := migrateFor(goType(k.Type), jen.Lit(k.QualifiedName()), pattern, codecValue(k))
				if k.Guard != nil {
					decl = migrateGuardedBy(decl, k.FullPath().String(), k.Guard.FullPath().String())
				}
				g.Line().Add(decl)
			}
			g.Line()
		})),
	)
}
