package schema

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a position in a schema file. Line and Col count from 1; a zero
// Line means the position is unknown (the whole file).
type Pos struct {
	Filename string
	Line     int
	Col      int
}

// String formats the position as "file:line:col", leaving out the parts
// that are unknown.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.Filename
	case p.Filename == "":
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Col)
}

func (p Pos) before(q Pos) bool {
	if p.Filename != q.Filename {
		return p.Filename < q.Filename
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Error is one problem found in a schema file.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList is every problem found in a schema file, sorted by position.
// Load returns one when the file is invalid; errors.As finds an *Error in
// it as well.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each *Error to errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l *ErrorList) add(pos Pos, format string, a ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, a...)})
}

// sort orders the list by position and drops exact duplicates, which arise
// when one bad declaration is reached along several paths.
func (l *ErrorList) sort() {
	sort.SliceStable(*l, func(i, j int) bool { return (*l)[i].Pos.before((*l)[j].Pos) })
	var out ErrorList
	for _, e := range *l {
		if len(out) > 0 && *e == *out[len(out)-1] {
			continue
		}
		out = append(out, e)
	}
	*l = out
}

func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
