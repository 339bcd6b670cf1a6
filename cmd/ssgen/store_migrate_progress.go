package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ssgen/ssgen/runtime/migrate"
)

// progressLine is one JSON progress line of migrate apply: the engine's
// report and the seconds it expects the declaration to take still (-1
// when it cannot tell).
type progressLine struct {
	migrate.Progress
	Left float64 `json:"left"`
}

// progress shows migrate apply's reports: a bar redrawn in place on a
// terminal, JSON lines otherwise.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	term  bool
	drawn bool // a bar is on the line
	width int  // the longest bar drawn, to blank a shorter one
}

func newProgress(w io.Writer, term bool) *progress { return &progress{w: w, term: term} }

func (p *progress) report(r migrate.Progress) {
	left := -1.0
	if r.Rate > 0 && r.Total >= r.Done {
		left = math.Round(float64(r.Total-r.Done)/r.Rate*10) / 10
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.term {
		r.Rate = math.Round(r.Rate*10) / 10
		b, err := json.Marshal(progressLine{Progress: r, Left: left})
		if err == nil {
			fmt.Fprintf(p.w, "%s\n", b)
		}
		return
	}
	line := bar(r, left)
	pad := ""
	if n := len(line); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	} else {
		p.width = n
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.drawn = true
}

// note prints a line of its own, below a bar drawn so far (the next
// report draws the bar again).
func (p *progress) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
}

// finish ends a bar's line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// bar draws one report: [#####.....] 1200/5000 SetPoint  2100 keys/s  0:02 left
func bar(r migrate.Progress, left float64) string {
	const cells = 20
	filled := 0
	total := "?"
	if r.Total > 0 {
		filled = int(min(r.Done, r.Total) * cells / r.Total)
		total = fmt.Sprint(r.Total)
	} else if r.Total == 0 {
		filled, total = cells, "0"
	}
	eta := "--:--"
	if left >= 0 {
		d := time.Duration(left * float64(time.Second)).Round(time.Second)
		eta = fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("[%s%s] %d/%s %s  %.0f keys/s  %s left", strings.Repeat("#", filled), strings.Repeat(".", cells-filled), r.Done, total, terminalSafe(clip(r.Decl, 40)), r.Rate, eta)
}

// clip bounds s to about n bytes, cut at a character's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
