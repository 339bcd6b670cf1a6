package protocol

import (
	"strings"
	"testing"
)

// TestErrorsListsEveryText checks the table against the texts: every
// Err* text of the vocabulary is listed once, with words, and no two
// entries share a metric name unless both are the unlisted one.
func TestErrorsListsEveryText(t *testing.T) {
	listed := map[string]bool{}
	metrics := map[string]string{}
	for _, e := range Errors {
		if listed[e.Text] {
			t.Errorf("%q listed twice", e.Text)
		}
		listed[e.Text] = true
		if e.Class == "" || e.Metric == "" {
			t.Errorf("%q has no class or metric name", e.Text)
		}
		if prev, ok := metrics[e.Metric]; ok && e.Metric != OtherErrorMetric {
			t.Errorf("metric name %q of both %q and %q", e.Metric, prev, e.Text)
		}
		metrics[e.Metric] = e.Text
		if got, ok := LookupError(e.Text); !ok || got != e {
			t.Errorf("LookupError(%q) = %v, %v", e.Text, got, ok)
		}
	}
	for name, text := range vocabulary {
		if strings.HasPrefix(name, "Err") && !listed[text] {
			t.Errorf("%s is not in Errors", name)
		}
	}
	if _, ok := LookupError("no such error"); ok {
		t.Error("LookupError found an unlisted text")
	}
}

// A schema violation's text carries the schema's names and words about a
// client's value: it stays one bounded line, and LookupError files it
// under its own words.
func TestSchemaViolationIsOneBoundedLine(t *testing.T) {
	for _, c := range []struct{ decl, path, msg, want string }{
		{"Config", ".mode", `"warm" is not a Mode`, `schema violation: Config .mode: "warm" is not a Mode`},
		{"Config", "", "not JSON", "schema violation: Config: not JSON"},
		{"K", ".a", "x\r\n-ERR y", "schema violation: K .a: x  -ERR y"},
	} {
		if got := SchemaViolation(c.decl, c.path, c.msg); got != c.want {
			t.Errorf("SchemaViolation(%q, %q, %q) = %q, want %q", c.decl, c.path, c.msg, got, c.want)
		}
	}
	long := SchemaViolation("K", ".a", strings.Repeat("\n", 1000))
	if len(long) != MaxSchemaViolationText || !strings.HasSuffix(long, "...") || strings.ContainsAny(long, "\r\n") {
		t.Errorf("long text: %d bytes %q", len(long), long[:40])
	}
	if info, ok := LookupError(SchemaViolation("K", "", "m")); !ok || info.Metric != "schema_violation" {
		t.Errorf("LookupError = %+v, %v", info, ok)
	}
}
