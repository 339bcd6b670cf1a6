package schemaval_test

import (
	"reflect"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
)

func TestResolve(t *testing.T) {
	r := schemaval.NewResolver(kindsSchema(t))
	tests := []struct {
		key    string
		name   string // "" when no declaration matches
		params map[string]any
		guard  string
	}{
		{"v/msgpack", "Packed", map[string]any{}, ""},
		{"s/enum", "EnumText", map[string]any{}, ""},
		{"thermostats/kitchen/setPoint", "Thermostat.SetPoint", map[string]any{"id": "kitchen"}, "thermostats/kitchen/owner"},
		{"thermostats/k-1/reading", "Thermostat.Reading", map[string]any{"id": "k-1"}, ""},
		{"thermostats/kitchen/owner", "Thermostat.Owner", map[string]any{"id": "kitchen"}, ""},
		{"zones/7/two words/name", "Zone.Name", map[string]any{"n": uint64(7), "mode": "two words"}, ""},
		{"zones/65535/heat/offset/-128", "Zone.Offset", map[string]any{"n": uint64(65535), "mode": "heat", "k": int64(-128)}, ""},

		// What a generated accessor would never render.
		{"thermostats/Kitchen/setPoint", "", nil, ""},            // misses the pattern
		{"thermostats//setPoint", "", nil, ""},                   // empty parameter
		{"thermostats/kitchen/setPoint/x", "", nil, ""},          // one segment too many
		{"thermostats/kitchen", "", nil, ""},                     // too few
		{"zones/07/heat/name", "", nil, ""},                      // leading zero
		{"zones/+7/heat/name", "", nil, ""},                      // sign
		{"zones/65536/heat/name", "", nil, ""},                   // out of uint16
		{"zones/-1/heat/name", "", nil, ""},                      // negative uint
		{"zones/1/warm/name", "", nil, ""},                       // not a Mode
		{"zones/1/heat/offset/128", "", nil, ""},                 // out of int8
		{"zones/1/heat/offset/-0", "", nil, ""},                  // -0 is not canonical
		{"v/msgpack/", "", nil, ""},                              // trailing slash
		{"", "", nil, ""},                                        // empty key
		{"\xff/\x00", "", nil, ""},                               // not text at all
		{"thermostats/kitchen/setpoint", "", nil, ""},            // case matters
		{"zones/1/heat/offset/1/name", "", nil, ""},              // no such shape
		{"zones/1/heat/offset/1\x00", "", nil, ""},               // trailing NUL
		{"thermostats/kitchen\n/setPoint", "", nil, ""},          // pattern is anchored
		{"thermostats/../setPoint", "", nil, ""},                 // '.' not in the pattern
		{"thermostats/kitchen/../kitchen/setPoint", "", nil, ""}, // no path arithmetic
	}
	for _, tt := range tests {
		m, ok := r.Resolve(tt.key)
		if ok != (tt.name != "") {
			t.Errorf("Resolve(%q): ok %v, want %v", tt.key, ok, tt.name != "")
			continue
		}
		if !ok {
			continue
		}
		if m.Name() != tt.name {
			t.Errorf("Resolve(%q) = %s, want %s", tt.key, m.Name(), tt.name)
		}
		if got := m.ParamMap(); !reflect.DeepEqual(got, tt.params) {
			t.Errorf("Resolve(%q) params %#v, want %#v", tt.key, got, tt.params)
		}
		if g, _ := m.GuardKey(); g != tt.guard {
			t.Errorf("Resolve(%q) guard key %q, want %q", tt.key, g, tt.guard)
		}
		if (m.Lock != nil) != (m.Codec() == nil) {
			t.Errorf("Resolve(%q): a lock has no codec, a key has one", tt.key)
		}
	}
}

// Parameters come back in the accessor's argument order (the group's,
// then the key's own), whatever their order in the path.
func TestResolveParamOrder(t *testing.T) {
	r := schemaval.NewResolver(kindsSchema(t))
	m, ok := r.Resolve("zones/3/cool/offset/-1")
	if !ok {
		t.Fatal("no match")
	}
	var names []string
	for _, p := range m.Params {
		names = append(names, p.Param.Name+"="+p.Text)
	}
	if want := []string{"n=3", "mode=cool", "k=-1"}; !reflect.DeepEqual(names, want) {
		t.Errorf("params %v, want %v", names, want)
	}
}
