package schema

import "testing"

func TestMermaidLabelsCannotBreakOut(t *testing.T) {
	got := mermaidLabel(`a"b`, "<br/>`#x", "c]d")
	if want := "a#quot;b<br/>#lt;br/#gt;#96;#35;x<br/>c]d"; got != want {
		t.Fatalf("mermaidLabel = %q, want %q", got, want)
	}
}
