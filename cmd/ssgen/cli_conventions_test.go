package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestVersionFlagAndVerbAgree(t *testing.T) {
	verb := runIn(t, "", nil, "version")
	flag := runIn(t, "", nil, "--version")
	verb.want(t, exitOK, nil)
	flag.want(t, exitOK, ptr(verb.stdout))
	if !strings.HasPrefix(verb.stdout, "ssgen ") || !strings.HasSuffix(verb.stdout, ")\n") || strings.Count(verb.stdout, "\n") != 1 {
		t.Errorf("version printed %q, want one line \"ssgen VERSION ... (goX)\"", verb.stdout)
	}
	runIn(t, "", nil, "version", "extra").want(t, exitUsage, ptr(""))
}

// Every verb's help starts with one sentence saying what it does, then
// its usage line.
func TestEveryVerbsHelpStartsWithASentence(t *testing.T) {
	for name, v := range verbs {
		r := runIn(t, "", nil, name, "--help")
		if r.code != exitOK || r.stdout != "" {
			t.Errorf("%s --help: exit %d, stdout %q", name, r.code, r.stdout)
			continue
		}
		first, rest, _ := strings.Cut(r.stderr, "\n")
		if first != sentence(v.summary) || !strings.HasPrefix(rest, "\nusage: ssgen "+name) {
			t.Errorf("%s --help starts %q, want the summary sentence, a blank line and the usage", name, r.stderr[:min(len(r.stderr), 200)])
		}
		if !unicode.IsUpper([]rune(first)[0]) || !strings.HasSuffix(first, ".") || strings.Contains(strings.TrimSuffix(first, "."), ". ") {
			t.Errorf("%s: %q is not one sentence", name, first)
		}
	}
}

func TestHelpVerbPrintsTheVerbsHelp(t *testing.T) {
	r := runIn(t, "", nil, "help", "get")
	r.want(t, exitOK, nil)
	if !strings.HasPrefix(r.stdout, "Print the value of a key.\n\nusage: ssgen get KEY") || r.stderr != "" {
		t.Errorf("help get: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r = runIn(t, "", nil, "help", "gett")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, `did you mean "get"?`) {
		t.Errorf("help gett: %q", r.stderr)
	}
	r = runIn(t, "", nil, "sett", "k", "v")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, `unknown verb "sett" (did you mean "set"?)`) {
		t.Errorf("sett: %q", r.stderr)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "help"}} {
		r := runIn(t, "", nil, args...)
		r.want(t, exitOK, nil)
		if !strings.Contains(r.stdout, "  completion ") || !strings.Contains(r.stdout, "ssgen help VERB") || r.stderr != "" {
			t.Errorf("%q printed %q, stderr %q", args, r.stdout, r.stderr)
		}
	}
	// The summaries start in one column, at least two spaces after the
	// longest verb (persistence).
	col := -1
	list := runIn(t, "", nil, "help").stdout
	_, list, _ = strings.Cut(list, "verbs:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, l := range strings.Split(list, "\n") {
		name, rest, _ := strings.Cut(strings.TrimPrefix(l, "  "), " ")
		c := 2 + len(name) + 1 + len(rest) - len(strings.TrimLeft(rest, " "))
		if col == -1 {
			col = c
		}
		if c != col || !strings.HasPrefix(rest, " ") {
			t.Errorf("help: %q: summary at column %d, others at %d (two spaces at least)", l, c, col)
		}
	}
	// Without a verb, the list goes to stderr and the exit says failure.
	bare := runIn(t, "", nil)
	if bare.code != exitUsage || bare.stdout != "" || !strings.Contains(bare.stderr, "ssgen help VERB") {
		t.Errorf("bare ssgen: exit %d, stdout %q, stderr %q", bare.code, bare.stdout, bare.stderr)
	}
}

// Help spells flags as every doc does (--broker), and a misspelt flag
// gets one line with a suggestion, not the whole usage.
func TestFlagsAreSpeltWithTwoDashesAndMisspellingsSuggested(t *testing.T) {
	for name := range verbs {
		r := runIn(t, "", nil, name, "--help")
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("%s --help lists %q", name, line)
			}
		}
	}
	r := runIn(t, "", nil, "get", "--brokr", "x", "k")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, "unknown flag --brokr (did you mean --broker?)") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = runIn(t, "", nil, "serve", "--lisen", "x")
	r.want(t, exitUsage, ptr(""))
	if !strings.Contains(r.stderr, "did you mean --listen?") {
		t.Errorf("stderr %q", r.stderr)
	}
	// A bad value: the flag, the value once, and what it should be.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "k", "--timeout", "soon"}, `ssgen get: --timeout: "soon" is not a duration (such as 10s, 1500ms or 2m)` + "\n"},
		{[]string{"keys", "--limit", "x"}, `ssgen keys: --limit: "x" is not a number` + "\n"},
		{[]string{"serve", "--max-keys", "99999999999999999999"}, `ssgen serve: --max-keys: "99999999999999999999" is out of range` + "\n"},
		{[]string{"set", "k", "v", "--px", "0"}, `ssgen set: --px: "0": want a positive number of milliseconds` + "\n"},
		{[]string{"keys", "--json=maybe"}, `ssgen keys: --json: "maybe" is not true or false` + "\n"},
		{[]string{"get", "--helpp", "k"}, "ssgen get: unknown flag --helpp (did you mean --help?) (see ssgen get --help)\n"},
	} {
		r := runIn(t, "", nil, c.args...)
		r.want(t, exitUsage, ptr(""))
		if r.stderr != c.want {
			t.Errorf("%q: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := runIn(t, "", nil, "completion", shell)
		r.want(t, exitOK, nil)
		for name := range verbs {
			if !strings.Contains(r.stdout, name) {
				t.Errorf("%s script does not name verb %s", shell, name)
			}
		}
		for _, flag := range []string{"schema", "broker", "fencing-token", "raw"} {
			if !strings.Contains(r.stdout, flag) {
				t.Errorf("%s script does not name flag --%s", shell, flag)
			}
		}
		// Where the shell is installed, the script must at least parse.
		check := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}[shell]
		if path, err := exec.LookPath(shell); err == nil {
			file := filepath.Join(t.TempDir(), "ssgen."+shell)
			writeTestFile(t, file, []byte(r.stdout))
			if out, err := exec.Command(path, append(check, file)...).CombinedOutput(); err != nil {
				t.Errorf("%s does not parse the script: %v\n%s", shell, err, out)
			}
		}
	}
	runIn(t, "", nil, "completion", "powershell").want(t, exitUsage, ptr(""))
	runIn(t, "", nil, "completion").want(t, exitUsage, ptr(""))
}

// The bash script completes verbs, flags and file arguments.
func TestBashCompletionCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "ssgen.bash")
	writeTestFile(t, script, []byte(runIn(t, "", nil, "completion", "bash").stdout))
	writeTestFile(t, filepath.Join(dir, "kinds.yaml"), []byte("x"))
	complete := func(words ...string) string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = strconv.Quote(w)
		}
		cmd := exec.Command(bash, "-c", "source "+script+"; COMP_WORDS=(ssgen "+strings.Join(quoted, " ")+"); COMP_CWORD="+strconv.Itoa(len(words))+"; _ssgen; echo \"${COMPREPLY[*]}\"")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"wat"}, "watch"},
		{[]string{"get", "--sch"}, "--schema"},
		{[]string{"get", "--schema", "kin"}, "kinds.yaml"},
		{[]string{"set", "--fencing"}, "--fencing-token"},
		{[]string{"set", "--broker", "x"}, ""},
		{[]string{"completion", "z"}, "zsh"},
		{[]string{"help", "ver"}, "version"},
	}
	for _, tt := range tests {
		if got := complete(tt.words...); got != tt.want {
			t.Errorf("ssgen %s<TAB>: %q, want %q", strings.Join(tt.words, " "), got, tt.want)
		}
	}
}

// TestReadmeShellVerbsSchemaClaim: the README's table says every shell
// verb but lock reads a schema; their flags agree.
func TestReadmeShellVerbsSchemaClaim(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "`./ssgen.yaml`; every one of them but `lock`)") {
		t.Fatal("the README's shell-verb row no longer says which verbs read a schema; update this test with it")
	}
	for _, v := range []string{"get", "set", "del", "vdel", "watch", "keys", "lock"} {
		has := strings.Contains(runIn(t, "", nil, v, "--help").stderr, "  --schema FILE")
		if has != (v != "lock") {
			t.Errorf("%s: --schema %v, but the README says otherwise", v, has)
		}
	}
}

// TestHelpPlaceholdersMatchTheDocs: --help names a flag's value as
// docs/cli.md does (`--limit N`, `--ca-file FILE`), not by its Go type
// (`--limit int`, `--ca-file string`). Every flag that takes a value
// prints a placeholder docs/cli.md writes for it; a flag the docs never
// write with one still gets a placeholder, not a type.
func TestHelpPlaceholdersMatchTheDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]map[string]bool{} // flag -> placeholders
	for _, m := range regexp.MustCompile("[`\\[ ]--([a-z0-9-]+) ([A-Z][A-Z:]*|[a-z]+(?:\\\\\\|[a-z-]+)+)[` \\]]").FindAllStringSubmatch(string(doc), -1) {
		if documented[m[1]] == nil {
			documented[m[1]] = map[string]bool{}
		}
		documented[m[1]][strings.ReplaceAll(m[2], `\|`, "|")] = true
	}
	types := map[string]bool{"string": true, "int": true, "int64": true, "uint": true, "uint64": true, "float": true, "duration": true, "value": true}
	line := regexp.MustCompile(`^  --([a-z0-9-]+)(?: (.+))?$`)
	var helps [][]string
	for name := range verbs {
		helps = append(helps, []string{name})
	}
	for _, s := range migrateSubs {
		helps = append(helps, []string{"migrate", s.name})
	}
	for _, args := range helps {
		name := strings.Join(args, " ")
		r := runIn(t, "", nil, append(args, "--help")...)
		for _, l := range strings.Split(r.stderr, "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil || m[2] == "" {
				continue // not a flag line, or a boolean flag
			}
			flagName, placeholder := m[1], m[2]
			if types[placeholder] {
				t.Errorf("ssgen %s --help: --%s %s names a Go type; write the placeholder in backquotes in the usage", name, flagName, placeholder)
				continue
			}
			if want := documented[flagName]; want != nil && !want[placeholder] {
				t.Errorf("ssgen %s --help: --%s %s, but docs/cli.md writes --%s %v", name, flagName, placeholder, flagName, keysOf(want))
			}
		}
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestKeysRawSaysWhatItChanges: keys prints no values, so its --raw is not
// "values are bytes".
func TestKeysRawSaysWhatItChanges(t *testing.T) {
	r := runIn(t, "", nil, "keys", "--help")
	if !strings.Contains(r.stderr, "listed without their declarations") || strings.Contains(r.stderr, "values are bytes") {
		t.Errorf("keys --help: %s", r.stderr)
	}
}
