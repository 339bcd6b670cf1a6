package textsafe

import "testing"

func TestClassification(t *testing.T) {
	for _, c := range []struct {
		r               rune
		lineBreak, hide bool
	}{
		{'a', false, false},
		{'\t', false, false},
		{' ', false, false},
		{'é', false, false},
		{'\n', true, false},
		{'\r', true, false},
		{'\v', true, false},
		{'\f', true, false},
		{0x85, true, false},
		{'\u2028', true, false},
		{'\u2029', true, false},
		{0, false, true},
		{0x1b, false, true},
		{0x7f, false, true},
		{0x9b, false, true},
		{'\uFEFF', false, true},
		{'\u202E', false, true},
		{'\u2066', false, true},
		{'\u200F', false, true},
		{'\uFFFD', false, false},
	} {
		if got := LineBreak(c.r); got != c.lineBreak {
			t.Errorf("LineBreak(%U) = %v", c.r, got)
		}
		if got := Hidden(c.r); got != c.hide {
			t.Errorf("Hidden(%U) = %v", c.r, got)
		}
	}
	if got := Escape('\u202E'); got != `\u202E` {
		t.Errorf("Escape = %q", got)
	}
}
