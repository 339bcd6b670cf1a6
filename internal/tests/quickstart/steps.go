package quickstart

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

type kind int

const (
	kindFile kind = iota
	kindRun
	kindServe
	kindOutput
)

// step is one marked code block of the README.
type step struct {
	kind kind
	arg  string // the path of a file
	body string // the code block's content, with its final newline
}

const marker = "<!-- quickstart:"

// parseSteps returns the marked code blocks of a README in order. A
// marker line is followed, after blank lines at most, by a fenced block.
func parseSteps(readme []byte) ([]step, error) {
	var out []step
	sc := bufio.NewScanner(bytes.NewReader(readme))
	line := 0
	var pending *step
	inBlock := false
	var body strings.Builder
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case inBlock && strings.HasPrefix(text, "```"):
			inBlock = false
			if pending != nil {
				pending.body = body.String()
				out = append(out, *pending)
				pending = nil
			}
		case inBlock:
			body.WriteString(text + "\n")
		case strings.HasPrefix(text, "```"):
			inBlock = true
			body.Reset()
		case strings.HasPrefix(text, marker):
			if pending != nil {
				return nil, fmt.Errorf("README.md:%d: a marker before the previous one's code block", line)
			}
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(text, marker), "-->"))
			st := &step{}
			switch {
			case len(f) == 2 && f[0] == "file":
				st.kind, st.arg = kindFile, f[1]
			case len(f) == 1 && f[0] == "run":
				st.kind = kindRun
			case len(f) == 1 && f[0] == "serve":
				st.kind = kindServe
			case len(f) == 1 && f[0] == "output":
				st.kind = kindOutput
			default:
				return nil, fmt.Errorf("README.md:%d: unknown marker %q", line, text)
			}
			pending = st
		case pending != nil && strings.TrimSpace(text) != "":
			return nil, fmt.Errorf("README.md:%d: a marker not followed by a code block", line)
		}
	}
	if pending != nil || inBlock {
		return nil, fmt.Errorf("README.md: a marker or code block left open at the end")
	}
	return out, sc.Err()
}

// commands returns the shell lines of a block, without comments and blank
// lines.
func commands(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
