package schemaval_test

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
)

func TestNearestNamesTheClosestDeclarationAndWhy(t *testing.T) {
	r := schemaval.NewResolver(kindsSchema(t))
	tests := []struct {
		key, name, why string
	}{
		{"thermostats/Kitchen/reading", "Thermostat.Reading", `"Kitchen" does not match {id}'s pattern [a-z0-9-]+`},
		{"thermostats/kitchen/readings", "Thermostat.Reading", `segment 3 is "readings" where the path has "reading"`},
		{"thermostats/kitchen/setPoint/x", "Thermostat.SetPoint", "the key has 4 segments, the path 3"},
		{"zones/07/heat/name", "Zone.Name", `"07" does not fit {n} (uint16`},
		{"zones/1/warm/name", "Zone.Name", `"warm" is not a Mode for {mode} (want one of`},
		{"zones/1/heat/offset/128", "Zone.Offset", `"128" does not fit {k} (int8`},
		{"thermostats/kitchen/owners", "Thermostat.Owner", `segment 3 is "owners"`},
	}
	for _, tt := range tests {
		m, ok := r.Nearest(tt.key)
		if !ok || m.Name != tt.name || !strings.Contains(m.Why, tt.why) {
			t.Errorf("Nearest(%q) = %+v, %v; want %s with %q", tt.key, m, ok, tt.name, tt.why)
		}
	}
	long := strings.Repeat("K", 10000)
	if m, _ := r.Nearest("thermostats/" + long + "/reading"); len(m.Why) > 200 {
		t.Errorf("a long segment is quoted whole: %d bytes", len(m.Why))
	}
}
