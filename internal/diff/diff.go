// Package diff writes line-based unified diffs, as diff -u does: what
// ssgen check prints for a stale generated file and what golden tests print
// when their output changed.
package diff

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// String is Unified into a string.
func String(aName, bName string, a, b []byte) string {
	var buf bytes.Buffer
	Unified(&buf, aName, bName, a, b)
	return buf.String()
}

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxLCSCells bounds the work of the line comparison; a middle part larger
// than this (two wholly different big files) is shown as removed and added.
const maxLCSCells = 1 << 22

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
}

// Unified writes a unified diff of a and b, as diff -u would, headed by
// the names aName and bName. Nothing but the header is written when a and
// b are equal.
func Unified(w io.Writer, aName, bName string, a, b []byte) {
	ops := diffLines(splitLines(a), splitLines(b))
	fmt.Fprintf(w, "--- %s\n+++ %s\n", aName, bName)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk runs from the change, with context, until two changes
		// are more than 2*context unchanged lines apart.
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := 1, 1
		for _, op := range ops[:start] {
			if op.kind != '+' {
				aStart++
			}
			if op.kind != '-' {
				bStart++
			}
		}
		var aLen, bLen int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			fmt.Fprintf(w, "%c%s\n", op.kind, op.line)
		}
		i = end
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		start-- // diff -u names the line before an empty range
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// diffLines compares two line lists: common prefix and suffix first, then a
// longest-common-subsequence table over what is left.
func diffLines(a, b []string) []diffOp {
	var pre, suf int
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{' ', l})
	}
	ops = append(ops, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func middle(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxLCSCells {
		for _, l := range a {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{'+', l})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i*w+j+1] >= lcs[(i+1)*w+j]):
			ops = append(ops, diffOp{'+', b[j]})
			j++
		default:
			ops = append(ops, diffOp{'-', a[i]})
			i++
		}
	}
	// Show removals before additions within a change, as diff does.
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		e := k
		for e < len(ops) && ops[e].kind != ' ' {
			e++
		}
		var minus, plus []diffOp
		for _, op := range ops[k:e] {
			if op.kind == '-' {
				minus = append(minus, op)
			} else {
				plus = append(plus, op)
			}
		}
		copy(ops[k:], append(minus, plus...))
		k = e
	}
	return ops
}
