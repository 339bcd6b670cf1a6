package schema

import "strings"

// The Go names that generated code declares besides the schema's own
// names live here, once: the generator uses them, and Load refuses a
// schema whose names would meet them (checkReserved).

// StoreTypeName and NewFuncName are the store type and its constructor
// that every generated package declares.
const (
	StoreTypeName = "Store"
	NewFuncName   = "New"
	// ClientMethodName is the Store's accessor of its *runtime.Client.
	ClientMethodName = "Client"
	// MigrationsFuncName is the function listing the declarations whose
	// stored values runtime/migrate rewrites (a schema whose values
	// evolve or have earlier versions).
	MigrationsFuncName = "Migrations"
)

// ParserName is the name of an enum's generated parser ("ParseMode").
func (t *TypeDef) ParserName() string { return "Parse" + t.Name }

// ParamsTypeName is the struct generated for the parameters of a group
// with parameters, as a listing reads them back ("ThermostatParams").
func (g *Group) ParamsTypeName() string { return g.Name + "Params" }

// ListerName is the Store method listing a group's instances
// ("ListThermostats").
func (g *Group) ListerName() string { return "List" + plural(g.Name) }

// WatcherName is the Store method watching a group's instances
// ("WatchThermostats").
func (g *Group) WatcherName() string { return "Watch" + plural(g.Name) }

// GetterName is the Store method reading a group key of many instances
// at once ("GetThermostatSetPoints"); see HasGetter.
func (k *Key) GetterName() string { return "Get" + k.Group.Name + plural(k.Name) }

// HasGetter reports whether generated code declares a multi-get for the
// key: a key of a group with parameters and none of its own, so that a
// list of the group's parameter values names one key per element.
func (k *Key) HasGetter() bool {
	return k.Group != nil && len(k.Group.Params) > 0 && len(k.Params) == 0
}

// TemplateVarName is the package variable of generated code holding a
// group's runtime.Template ("thermostatTemplate", "httpServerTemplate").
func (g *Group) TemplateVarName() string { return unexportedName(g.Name) + "Template" }

// FieldName is the Go field of a group parameter in its Params struct:
// the name as an exported Go name, initialisms in capitals ("id" → "ID",
// "siteName" → "SiteName").
func (p *Param) FieldName() string { return exportedName(p.Name) }

// PatternVarName is the package variable of generated code holding the
// compiled pattern of parameter p of owner (a group, key or lock, by its
// qualified name): "lineStationNPattern" for parameter n of key
// Line.Station, "thermostatIDPattern" for parameter id of Thermostat.
func (p *Param) PatternVarName(owner string) string {
	return unexportedName(strings.ReplaceAll(owner, ".", "_")) + p.FieldName() + "Pattern"
}

// plural is the English plural of a Go name, by the spelling rules that
// need no dictionary: Thermostat → Thermostats, Box → Boxes, Entry →
// Entries, Status → Statuses.
func plural(s string) string {
	lower := strings.ToLower(s)
	switch {
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return s + "es"
	case len(lower) >= 2 && lower[len(lower)-1] == 'y' && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// TransitionsFuncName is the package function of generated code that
// checks a write of a struct type with transition rules
// (ssgenTransitionsDevice).
func (t *TypeDef) TransitionsFuncName() string { return "ssgenTransitions" + t.Name }

// EvolutionVarName is the package variable of generated code holding the
// package's codec.Evolution, declared when a struct evolves.
const EvolutionVarName = "ssgenEvolution"

// RenamedVarName is the package variable of generated code mapping an
// enum's earlier spellings to its values ("modeRenamed"), declared when
// a value has renamed_from.
func (t *TypeDef) RenamedVarName() string { return unexportedName(t.Name) + "Renamed" }
