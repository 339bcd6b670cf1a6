package templates

import (
	"strings"
	"testing"
)

func TestCommentsWrapAtSpacesAndKeepTheAuthorsLineBreaks(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, line := range wrap(long) {
		if len(line) > wrapWidth {
			t.Errorf("line of %d bytes: %q", len(line), line)
		}
	}
	if got := wrap("first\nsecond"); len(got) != 2 {
		t.Errorf("author's break lost: %q", got)
	}
	unbreakable := strings.Repeat("x", 100)
	if got := wrap(unbreakable); len(got) != 1 || got[0] != unbreakable {
		t.Errorf("a single long word was split: %q", got)
	}
}
