package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/ssgen/ssgen/server"
)

// chaosPath is where a server's HTTP surface (ssgen serve --http) serves
// its chaos rules.
const chaosPath = "/api/chaos"

func init() {
	register(verb{name: "chaos", summary: "show, replace or clear the chaos rules of a running server", run: runChaos})
}

func runChaos(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "chaos", "--http URL [FILE | --clear] [flags]\n\n"+
		"Shows the chaos rules of a running ssgen serve --http, one line per rule with\n"+
		"how many requests it affected; with FILE (- for stdin), a chaos file in YAML\n"+
		"(docs/testing.md), replaces them all, or with --clear removes them. A file with\n"+
		"any problem is refused, naming the rule and field, and the rules in force stay.\n\nflags:")
	var hf httpFlags
	hf.register(fs)
	clearAll := fs.Bool("clear", false, "remove every chaos rule")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if err := hf.required(""); err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return usageErrorf("want at most one chaos FILE, got %d arguments", len(pos))
	case len(pos) == 1 && *clearAll:
		return usageErrorf("FILE and --clear exclude each other")
	}
	method, contentType, body := http.MethodGet, "", io.Reader(nil)
	switch {
	case *clearAll:
		method = http.MethodDelete
	case len(pos) == 1:
		var file []byte
		if pos[0] == "-" {
			file, err = io.ReadAll(env.stdin)
		} else {
			file, err = os.ReadFile(pos[0])
		}
		if err != nil {
			return usageErrorf("%v", err)
		}
		// Checked here first, so that a bad file is named with its path.
		name := pos[0]
		if name == "-" {
			name = "stdin"
		}
		if _, err := server.ParseChaosFile(name, bytes.NewReader(file)); err != nil {
			return usageErrorf("%s", libText(err))
		}
		method, contentType, body = http.MethodPut, "application/yaml", bytes.NewReader(file)
	}
	resp, err := hf.call(ctx, env, method, chaosPath, contentType, body)
	if err != nil {
		var refused *httpStatusError
		if errors.As(err, &refused) {
			return &exitError{code: exitUsage, err: errors.New(refused.msg)}
		}
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Rules []server.ChaosStatus `json:"rules"`
	}
	if err := decodeAnswer(resp.Body, 1<<20, &st); err != nil {
		return err
	}
	if len(st.Rules) == 0 {
		fmt.Fprintln(env.stdout, "no chaos rules")
	}
	for i, r := range st.Rules {
		// The server's text: a rule's name, key, client and -ERR text
		// are shown, never acted on by the terminal.
		fmt.Fprintln(env.stdout, terminalSafe(chaosLine(i, &r)))
	}
	return nil
}

// chaosLine describes one rule in force: name, match, effect, counters.
func chaosLine(i int, r *server.ChaosStatus) string {
	name := r.Name
	if name == "" {
		name = fmt.Sprintf("rule %d", i+1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", name)
	verbs := "any verb"
	if len(r.Verbs) > 0 {
		verbs = strings.Join(r.Verbs, ",")
	}
	b.WriteString(verbs)
	if r.Key != "" {
		fmt.Fprintf(&b, " key %q", r.Key)
	}
	if r.Client != "" {
		fmt.Fprintf(&b, " client %q", r.Client)
	}
	fmt.Fprintf(&b, " -> %s", r.Effect)
	switch r.Effect {
	case server.ChaosError:
		fmt.Fprintf(&b, " %q", r.Error)
	case server.ChaosDelay:
		fmt.Fprintf(&b, " %s", r.Delay)
	}
	if r.Probability != nil {
		fmt.Fprintf(&b, ", probability %g", *r.Probability)
	}
	fmt.Fprintf(&b, "; fired %d", r.Fired)
	if r.Left != nil {
		fmt.Fprintf(&b, ", %d left", *r.Left)
	}
	return b.String()
}
