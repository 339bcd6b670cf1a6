package schema

import "testing"

func TestPluralFollowsTheSpellingRules(t *testing.T) {
	for in, want := range map[string]string{
		"Thermostat": "Thermostats", "Box": "Boxes", "Status": "Statuses", "Batch": "Batches",
		"Mesh": "Meshes", "Entry": "Entries", "Day": "Days", "Quiz": "Quizes", "Y": "Ys",
	} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
}
