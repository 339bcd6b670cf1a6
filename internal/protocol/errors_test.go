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
