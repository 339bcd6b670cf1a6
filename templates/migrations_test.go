package templates_test

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
)

// TestMigrationsEntryPoint: Migrations is declared exactly when a key's
// values migrate (an evolving struct or enum, a versioned type with
// previous versions), lists those keys only, and such a file needs
// SupportPackageIsVersion6, as does one with transition rules; a moved key
// alone changes no value.
func TestMigrationsEntryPoint(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		guard      string
		decls      []string // the declarations Migrations lists; nil: no Migrations
		guardedBy  []string // the GuardedBy calls among them
	}{
		{"plain", `
types:
  T: {fields: {a: int}}
keys:
  K: {path: k, type: T}
`, "SupportPackageIsVersion3", nil, nil},
		{"moved key only", `
keys:
  K: {path: k2, renamed_from: k, type: int64}
`, "SupportPackageIsVersion4", nil, nil},
		{"evolving struct and enum", `
types:
  M: {enum: [a, {value: b, renamed_from: c}]}
  T: {fields: {a: {type: int, renamed_from: x}}}
  U: {fields: {a: int}}
keys:
  K: {path: k, type: T}
  L: {path: l, type: "[]M", encoding: json}
  N: {path: n, type: U}
groups:
  G:
    path: g/{id}
    params: {id: string}
    keys:
      E: {path: e, type: "map[string]T"}
`, "SupportPackageIsVersion6", []string{`"K", runtime.GlobEscape("k")`, `"L", runtime.GlobEscape("l")`, `"G.E", "g/*/e"`}, nil},
		{"guarded keys", `
types:
  T: {fields: {a: {type: int, renamed_from: x}}}
keys:
  K: {path: k, type: T, guard: Top}
  U: {path: u, type: T}
locks:
  Top: {path: locks/top, ttl: 5s}
groups:
  G:
    path: sites/{site}/g/{id}
    params: {site: string, id: int64}
    keys:
      E: {path: e, type: T, guard: Owner}
      F: {path: "f/{n}", params: {n: string}, type: T, guard: Top}
    locks:
      Owner: {path: owner, ttl: 5s}
`, "SupportPackageIsVersion6", []string{`"K", runtime.GlobEscape("k")`, `"U", runtime.GlobEscape("u")`, `"G.E", "sites/*/g/*/e"`, `"G.F", "sites/*/g/*/f/*"`}, []string{
			`).GuardedBy("k", "locks/top")`,
			`).GuardedBy("sites/{site}/g/{id}/e", "sites/{site}/g/{id}/owner")`,
			`).GuardedBy("sites/{site}/g/{id}/f/{n}", "locks/top")`,
		}},
		{"versioned without previous", `
types:
  T: {version: 1, fields: {a: int}}
keys:
  K: {path: k, type: T}
`, "SupportPackageIsVersion5", nil, nil},
		{"transition rules", `
types:
  T: {fields: {a: {type: int, monotonic: increasing}}}
keys:
  K: {path: k, type: T}
`, "SupportPackageIsVersion6", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := schema.Load("ssgen.yaml", []byte("version: 1\npackage: p\n"+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			src := string(generateOne(t, s))
			if !strings.Contains(src, "runtime."+tc.guard) {
				t.Errorf("want %s", tc.guard)
			}
			has := strings.Contains(src, "func Migrations() []migrate.Decl")
			if has != (tc.decls != nil) {
				t.Fatalf("Migrations declared: %v, want %v\n%s", has, tc.decls != nil, src)
			}
			if got := strings.Count(src, "migrate.For["); got != len(tc.decls) {
				t.Errorf("%d migrate.For, want %d", got, len(tc.decls))
			}
			if got := strings.Count(src, ").GuardedBy("); got != len(tc.guardedBy) {
				t.Errorf("%d GuardedBy, want %d", got, len(tc.guardedBy))
			}
			for _, d := range append(tc.decls, tc.guardedBy...) {
				if !strings.Contains(src, d) {
					t.Errorf("no %s in Migrations", d)
				}
			}
		})
	}
}
