package server

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func prob(p float64) *float64 { return &p }

func TestCompileChaosRefusesBadRules(t *testing.T) {
	for _, c := range []struct {
		name string
		rule ChaosRule
		says string
	}{
		{"no effect", ChaosRule{}, "effect: missing"},
		{"unknown effect", ChaosRule{Effect: "explode"}, `"explode" is not`},
		{"error without text", ChaosRule{Effect: ChaosError}, "error: the -ERR text"},
		{"error on two lines", ChaosRule{Effect: ChaosError, Error: "a\r\nb"}, "one line"},
		{"error too long", ChaosRule{Effect: ChaosError, Error: strings.Repeat("x", 257)}, "256"},
		{"error text on drop", ChaosRule{Effect: ChaosDrop, Error: "x"}, "only for effect error"},
		{"delay missing", ChaosRule{Effect: ChaosDelay}, "delay: more than 0"},
		{"delay too long", ChaosRule{Effect: ChaosDelay, Delay: Duration(2 * time.Hour)}, "at most 1h"},
		{"delay on error", ChaosRule{Effect: ChaosError, Error: "x", Delay: Duration(time.Second)}, "only for effect delay"},
		{"lower-case verb", ChaosRule{Effect: ChaosDrop, Verbs: []string{"get"}}, `"get" is not one of`},
		{"probability 0", ChaosRule{Effect: ChaosDrop, Probability: prob(0)}, "probability"},
		{"probability over 1", ChaosRule{Effect: ChaosDrop, Probability: prob(1.5)}, "probability"},
		{"negative count", ChaosRule{Effect: ChaosDrop, Count: -1}, "count"},
		{"name on two lines", ChaosRule{Name: "a\nb", Effect: ChaosDrop}, "name"},
	} {
		_, err := compileChaos([]ChaosRule{{Effect: ChaosDrop}, c.rule})
		if !errors.Is(err, ErrInvalidChaos) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "rules[1]") {
			t.Errorf("%s: %v, want ErrInvalidChaos naming rules[1] and saying %q", c.name, err, c.says)
		}
	}
	if _, err := compileChaos(make([]ChaosRule, MaxChaosRules+1)); !errors.Is(err, ErrInvalidChaos) {
		t.Errorf("too many rules: %v", err)
	}
}

func args(a ...string) [][]byte {
	out := make([][]byte, len(a))
	for i, s := range a {
		out[i] = []byte(s)
	}
	return out
}

func TestChaosMatch(t *testing.T) {
	set, err := compileChaos([]ChaosRule{
		{Name: "config reads", Verbs: []string{"GET"}, Key: "config/*", Effect: ChaosError, Error: "the quota has been exceeded"},
		{Client: "flaky-*", Effect: ChaosDrop, Count: 2},
		{Verbs: []string{"SET", "DEL"}, Key: "slow/*", Effect: ChaosDelay, Delay: Duration(time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client string
		args   [][]byte
		want   string // the effect, "" for none
		rule   string
	}{
		{"app", args("GET", "config/a"), ChaosError, "config reads"},
		{"app", args("SET", "config/a", "v"), "", ""},
		{"app", args("GET", "other"), "", ""},
		{"app", args("GET"), "", ""},                                     // no key: a key glob does not match
		{"flaky-1", args("GET", "config/a"), ChaosError, "config reads"}, // the first rule that matches wins
		{"flaky-1", args("GET", "x"), ChaosDrop, "rule 2"},
		{"flaky-2", args("KEYNOTIFY", "x"), ChaosDrop, "rule 2"},
		{"flaky-3", args("GET", "x"), "", ""}, // count spent
		{"app", args("DEL", "slow/k"), ChaosDelay, "rule 3"},
		{"app", nil, "", ""},
	} {
		h := set.match(c.client, c.args)
		switch {
		case c.want == "" && h != nil:
			t.Errorf("%s %q: %s, want no effect", c.client, c.args, h.effect)
		case c.want != "" && (h == nil || h.effect != c.want || h.rule.name != c.rule || !strings.Contains(h.why, c.rule)):
			t.Errorf("%s %q: %+v, want %s by %s", c.client, c.args, h, c.want, c.rule)
		}
	}
	if h := set.match("app", args("GET", "config/a")); h.rule.Error != "the quota has been exceeded" {
		t.Errorf("error %q", h.rule.Error)
	}
	if set.rules[1].fired.Load() != 2 || set.rules[1].left.Load() != 0 {
		t.Errorf("rule 2 fired %d, left %d", set.rules[1].fired.Load(), set.rules[1].left.Load())
	}
}

func TestChaosProbability(t *testing.T) {
	set, err := compileChaos([]ChaosRule{{Effect: ChaosDrop, Probability: prob(0.25)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dice float64
		hit  bool
	}{{0, true}, {0.2499, true}, {0.25, false}, {0.9, false}} {
		set.dice = func() float64 { return c.dice }
		if h := set.match("c", args("GET", "k")); (h != nil) != c.hit {
			t.Errorf("dice %v: hit %v, want %v", c.dice, h != nil, c.hit)
		}
	}
}

func TestParseChaosFile(t *testing.T) {
	rules, err := ParseChaos(strings.NewReader(`
rules:
  - name: slow writes
    verbs: [SET]
    key: "sensors/*"
    effect: delay
    delay: 1500ms
    probability: 0.5
    count: 10
  - effect: error
    error: the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Delay != Duration(1500*time.Millisecond) || *rules[0].Probability != 0.5 || rules[0].Count != 10 || rules[1].Effect != ChaosError {
		t.Fatalf("%+v", rules)
	}
	for _, bad := range []string{"rules:\n  - effect: drop\n    colour: red\n", "rules: [{effect: delay, delay: soon}]", "- effect: drop"} {
		if _, err := ParseChaos(strings.NewReader(bad)); !errors.Is(err, ErrInvalidChaos) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Review of #30, F7: a file without rules (empty, comments only, no
// rules: or an empty list) would clear every rule unasked: refused,
// pointing to ssgen chaos --clear.
func TestParseChaosRefusesAFileWithoutRules(t *testing.T) {
	for _, in := range []string{"", "# nothing yet\n", "---\n", "rules:\n", "rules: []\n", "{}"} {
		rules, err := ParseChaos(strings.NewReader(in))
		if !errors.Is(err, ErrInvalidChaos) || !strings.Contains(err.Error(), "ssgen chaos --clear") || rules != nil {
			t.Errorf("%q: %v %v, want a refusal pointing to ssgen chaos --clear", in, rules, err)
		}
	}
}

// Review of #30, F8: a problem the YAML decoder finds names the rule, the
// field and, for a file, file:line:column.
func TestParseChaosNamesTheRuleAndFieldOfYAMLProblems(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"rules:\n  - effect: drop\n    colour: red\n", `chaos.yaml:3:5: invalid chaos rules: rules[0]: unknown field "colour"`},
		{"rules:\n  - effect: drop\n  - verbs: GET\n    effect: drop\n", `chaos.yaml:3:12: invalid chaos rules: rules[1].verbs: want a list of verbs such as [GET, SET], got "GET"`},
		{"rules:\n  - effect: delay\n    delay: 2\n", `chaos.yaml:3:12: invalid chaos rules: rules[0].delay: want a duration such as 250ms or 2s, got "2"`},
		{"rules:\n  - effect: drop\n    count: [1]\n", `chaos.yaml:3:12: invalid chaos rules: rules[0].count: want a whole number, got a seq`},
		{"rules:\n  - drop\n", `chaos.yaml:2:5: invalid chaos rules: rules[0]: want a mapping`},
		{"rules: 3\n", `chaos.yaml:1:8: invalid chaos rules: rules: want a list of rules`},
		{"rulez: []\n", `chaos.yaml:1:1: invalid chaos rules: unknown field "rulez"`},
		{"rules:\n  - effect: drop\n    effect: error\n", `chaos.yaml:3:5: invalid chaos rules: rules[0].effect: given twice`},
		{"rules:\n  - effect: explode\n", `chaos.yaml: invalid chaos rules: rules[0] ("rule 1"): effect: "explode" is not`},
	} {
		_, err := ParseChaosFile("chaos.yaml", strings.NewReader(c.in))
		if !errors.Is(err, ErrInvalidChaos) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want it to start %q", c.in, err, c.want)
		}
	}
	// Without a file name (the HTTP API): the line and column.
	_, err := ParseChaos(strings.NewReader("rules:\n  - effect: drop\n    colour: red\n"))
	if err == nil || err.Error() != `invalid chaos rules: line 3, column 5: rules[0]: unknown field "colour" (the fields: name, verbs, key, client, effect, error, delay, probability, count)` {
		t.Errorf("without a name: %v", err)
	}
}

// Review of #30, F4: a rule's name and -ERR text reach terminals (ssgen
// chaos, ssgen get) and logs: control, bidirectional and invalid UTF-8
// characters are refused.
func TestCompileChaosRefusesControlAndBidiText(t *testing.T) {
	for _, s := range []string{"a\x1b[31mred", "bell\a", "nul\x00", "rtl\u202eevil", "isolate\u2066x", "tab\tx", "bad\xffutf8", "del\x7f", "c1\u009b", "ls\u2028x"} {
		if _, err := compileChaos([]ChaosRule{{Name: s, Effect: ChaosDrop}}); !errors.Is(err, ErrInvalidChaos) || !strings.Contains(err.Error(), "name:") {
			t.Errorf("name %q: %v", s, err)
		}
		if _, err := compileChaos([]ChaosRule{{Effect: ChaosError, Error: "boom " + s}}); !errors.Is(err, ErrInvalidChaos) || !strings.Contains(err.Error(), "error:") {
			t.Errorf("error %q: %v", s, err)
		}
	}
	if _, err := compileChaos([]ChaosRule{{Name: "température réglée", Effect: ChaosError, Error: "la clé n'existe pas"}}); err != nil {
		t.Errorf("plain UTF-8 refused: %v", err)
	}
}

func FuzzParseChaos(f *testing.F) {
	f.Add("rules:\n  - name: a\n    verbs: [GET, SET]\n    key: \"k/*\"\n    client: \"c?\"\n    effect: error\n    error: busy\n    probability: 0.5\n    count: 2\n")
	f.Add(`{"rules":[{"effect":"delay","delay":"1ms"},{"effect":"disconnect"}]}`)
	f.Add("rules: [{effect: drop, key: \"[a-\"}]")
	f.Add("rules:\n  - effect: delay\n    delay: -1s\n")
	f.Add("rules: []\n")
	f.Add("rules:\n  - &a {effect: drop}\n  - *a\n")
	f.Fuzz(func(t *testing.T, in string) {
		rules, err := ParseChaos(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrInvalidChaos) {
				t.Fatalf("error %v does not match ErrInvalidChaos", err)
			}
			return
		}
		set, err := compileChaos(rules)
		if err != nil {
			t.Fatalf("accepted rules do not compile: %v", err)
		}
		if set != nil {
			set.match("c1", args("GET", "k/1"))
		}
	})
}
