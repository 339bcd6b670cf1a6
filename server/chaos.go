package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/textsafe"
)

// Chaos rules (Options.Chaos, ssgen serve --chaos FILE): state store
// requests that match a rule get an injected effect instead of, or on top
// of, their answer. This file holds the rules and their matching; the
// envelope (process) applies the effects, the transports carry out a
// disconnect and a delay.

// Bounds of a set of chaos rules.
const (
	MaxChaosRules      = 100
	maxChaosErrorBytes = 256
	MaxChaosDelay      = time.Hour
)

// Chaos effects.
const (
	ChaosError      = "error"      // answer Error as -ERR, the request not run
	ChaosDrop       = "drop"       // answer nothing (the client times out), the request not run
	ChaosDelay      = "delay"      // run the request, hold its answer for Delay
	ChaosDisconnect = "disconnect" // disconnect the client (external mode: drop), the request not run
)

// ErrInvalidChaos wraps every problem found in chaos rules.
var ErrInvalidChaos = errors.New("invalid chaos rules")

// ChaosRule is one chaos rule. A request matches when its verb is one of
// Verbs (any verb when empty), its key (SCAN: its pattern) matches the glob
// Key (any key, or none, when empty) and its client id matches the glob
// Client (any client when empty); globs have SCAN's syntax.
type ChaosRule struct {
	// Name names the rule in the trace and the log ("rule N", its place
	// from 1, when empty).
	Name   string   `json:"name,omitempty" yaml:"name,omitempty"`
	Verbs  []string `json:"verbs,omitempty" yaml:"verbs,omitempty"`
	Key    string   `json:"key,omitempty" yaml:"key,omitempty"`
	Client string   `json:"client,omitempty" yaml:"client,omitempty"`
	// Effect is ChaosError, ChaosDrop, ChaosDelay or ChaosDisconnect.
	Effect string `json:"effect" yaml:"effect"`
	// Error is the -ERR text of ChaosError (without "-ERR "), at most 256
	// bytes on one line: one of the protocol's texts, or any other.
	Error string `json:"error,omitempty" yaml:"error,omitempty"`
	// Delay is how long ChaosDelay holds the answer (up to an hour).
	Delay Duration `json:"delay,omitempty" yaml:"delay,omitempty"`
	// Probability is the chance that a matching request gets the effect,
	// in (0, 1]; 1 when absent.
	Probability *float64 `json:"probability,omitempty" yaml:"probability,omitempty"`
	// Count, when not 0, is how many requests get the effect: the rule
	// does nothing after that.
	Count int64 `json:"count,omitempty" yaml:"count,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("250ms",
// "2s") in JSON and YAML.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%s: want a duration such as 250ms or 2s", quoteValue(string(b)))
	}
	*d = Duration(v)
	return nil
}

// ChaosFile is the chaos file (YAML) and the body of the HTTP API (JSON
// or YAML): the rules, in the order they are tried.
type ChaosFile struct {
	Rules []ChaosRule `json:"rules" yaml:"rules"`
}

// ParseChaos reads a chaos file (YAML, of which JSON is a subset) and
// checks its rules; an error wraps ErrInvalidChaos and names the rule
// (rules[i]) and its field, with the line and column in the text. A file
// without rules (empty, or only comments) is refused: clearing every rule
// is asked for explicitly (Server.SetChaos(nil), DELETE /api/chaos,
// ssgen chaos --clear).
func ParseChaos(r io.Reader) ([]ChaosRule, error) { return parseChaos("", r) }

// ParseChaosFile is ParseChaos for the file called name: its errors start
// with name:line:column (name alone when the problem has no place).
func ParseChaosFile(name string, r io.Reader) ([]ChaosRule, error) { return parseChaos(name, r) }

// chaosFields are a rule's fields in the file, in ChaosRule's order,
// with what each wants.
var chaosFields = []chaosField{
	{"name", "a string", func(r *ChaosRule) any { return &r.Name }},
	{"verbs", "a list of verbs such as [GET, SET]", func(r *ChaosRule) any { return &r.Verbs }},
	{"key", "a glob such as config/*", func(r *ChaosRule) any { return &r.Key }},
	{"client", "a glob such as thermostat-*", func(r *ChaosRule) any { return &r.Client }},
	{"effect", "error, drop, delay or disconnect", func(r *ChaosRule) any { return &r.Effect }},
	{"error", "the -ERR text, a string", func(r *ChaosRule) any { return &r.Error }},
	{"delay", "a duration such as 250ms or 2s", func(r *ChaosRule) any { return &r.Delay }},
	{"probability", "a number in (0, 1]", func(r *ChaosRule) any { return &r.Probability }},
	{"count", "a whole number", func(r *ChaosRule) any { return &r.Count }},
}

type chaosField struct {
	name string
	want string
	ptr  func(*ChaosRule) any
}

// errNoChaosRules is the refusal of a chaos file without rules.
const errNoChaosRules = "no rules (an empty file would clear every rule): to remove them all, use ssgen chaos --clear (HTTP: DELETE /api/chaos)"

func parseChaos(name string, r io.Reader) ([]ChaosRule, error) {
	whole := func(msg string) error {
		if name != "" {
			return fmt.Errorf("%s: %w: %s", name, ErrInvalidChaos, msg)
		}
		return fmt.Errorf("%w: %s", ErrInvalidChaos, msg)
	}
	at := func(n *yaml.Node, where, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if where != "" {
			msg = where + ": " + msg
		}
		if name != "" {
			return fmt.Errorf("%s:%d:%d: %w: %s", name, n.Line, n.Column, ErrInvalidChaos, msg)
		}
		return fmt.Errorf("%w: line %d, column %d: %s", ErrInvalidChaos, n.Line, n.Column, msg)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, whole(errNoChaosRules)
		}
		return nil, whole(err.Error())
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, whole(errNoChaosRules)
	}
	if root.Kind != yaml.MappingNode {
		return nil, at(root, "", "want a mapping holding rules: (a list of rules)")
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Value != "rules" {
			return nil, at(k, "", "unknown field %s: a chaos file holds rules: only", quoteValue(k.Value))
		}
		if list != nil {
			return nil, at(k, "rules", "given twice")
		}
		list = root.Content[i+1]
	}
	switch {
	case list == nil, list.Kind == yaml.ScalarNode && list.Tag == "!!null", list.Kind == yaml.SequenceNode && len(list.Content) == 0:
		return nil, whole(errNoChaosRules)
	case list.Kind != yaml.SequenceNode:
		return nil, at(list, "rules", "want a list of rules")
	case len(list.Content) > MaxChaosRules:
		return nil, whole(fmt.Sprintf("%d rules, at most %d", len(list.Content), MaxChaosRules))
	}
	rules := make([]ChaosRule, len(list.Content))
	for i, rn := range list.Content {
		where := fmt.Sprintf("rules[%d]", i)
		if rn.Kind != yaml.MappingNode {
			return nil, at(rn, where, "want a mapping of the rule's fields (name, verbs, key, client, effect, error, delay, probability, count)")
		}
		seen := map[string]bool{}
		for j := 0; j+1 < len(rn.Content); j += 2 {
			k, v := rn.Content[j], rn.Content[j+1]
			fi := slices.IndexFunc(chaosFields, func(f chaosField) bool { return f.name == k.Value })
			if fi < 0 {
				return nil, at(k, where, "unknown field %s (the fields: name, verbs, key, client, effect, error, delay, probability, count)", quoteValue(k.Value))
			}
			f := chaosFields[fi]
			if seen[f.name] {
				return nil, at(k, where+"."+f.name, "given twice")
			}
			seen[f.name] = true
			if err := v.Decode(f.ptr(&rules[i])); err != nil {
				got := "a " + strings.TrimPrefix(v.Tag, "!!")
				if v.Kind == yaml.ScalarNode {
					got = quoteValue(v.Value)
				}
				return nil, at(v, where+"."+f.name, "want %s, got %s", f.want, got)
			}
		}
	}
	if _, err := compileChaos(rules); err != nil {
		if name != "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, err
	}
	return rules, nil
}

// LoadChaos reads and checks the chaos file at path.
func LoadChaos(path string) ([]ChaosRule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseChaosFile(path, f)
}

// chaosRule is a checked rule, with its counters.
type chaosRule struct {
	ChaosRule
	name   string
	verbs  []string // nil: any
	key    *glob.Pattern
	client *glob.Pattern
	p      float64
	left   atomic.Int64
	fired  atomic.Int64
}

// chaosSet is the rules in force; replaced whole, never changed.
type chaosSet struct {
	rules []*chaosRule
	// dice returns a number in [0, 1) (tests make it predictable).
	dice func() float64
}

func compileChaos(rules []ChaosRule) (*chaosSet, error) {
	if len(rules) > MaxChaosRules {
		return nil, fmt.Errorf("%w: %d rules, at most %d", ErrInvalidChaos, len(rules), MaxChaosRules)
	}
	set := &chaosSet{dice: rand.Float64}
	for i, r := range rules {
		c := &chaosRule{ChaosRule: r, name: r.Name, p: 1}
		if c.name == "" {
			c.name = fmt.Sprintf("rule %d", i+1)
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: rules[%d] (%s): %s", ErrInvalidChaos, i, quoteValue(c.name), fmt.Sprintf(format, args...))
		}
		if len(r.Name) > 64 || !plainText(r.Name) {
			return nil, bad("name: at most 64 bytes of UTF-8 on one line, without control or bidirectional characters")
		}
		for _, v := range r.Verbs {
			if !slices.Contains(protocol.Verbs[:], v) {
				return nil, bad("verbs: %s is not one of %s", quoteValue(v), strings.Join(protocol.Verbs[:], ", "))
			}
		}
		if len(r.Verbs) > 0 {
			c.verbs = r.Verbs
		}
		if r.Key != "" {
			c.key = glob.Compile(r.Key)
		}
		if r.Client != "" {
			c.client = glob.Compile(r.Client)
		}
		switch r.Effect {
		case ChaosError:
			if r.Error == "" || len(r.Error) > maxChaosErrorBytes || !plainText(r.Error) {
				return nil, bad("error: the -ERR text, 1 to %d bytes of UTF-8 on one line, without control or bidirectional characters", maxChaosErrorBytes)
			}
		case ChaosDrop, ChaosDisconnect:
		case ChaosDelay:
			if r.Delay <= 0 || time.Duration(r.Delay) > MaxChaosDelay {
				return nil, bad("delay: more than 0 and at most %s", MaxChaosDelay)
			}
		case "":
			return nil, bad("effect: missing (error, drop, delay or disconnect)")
		default:
			return nil, bad("effect: %s is not error, drop, delay or disconnect", quoteValue(r.Effect))
		}
		if r.Effect != ChaosError && r.Error != "" {
			return nil, bad("error: only for effect error")
		}
		if r.Effect != ChaosDelay && r.Delay != 0 {
			return nil, bad("delay: only for effect delay")
		}
		if r.Probability != nil {
			c.p = *r.Probability
			if !(c.p > 0 && c.p <= 1) {
				return nil, bad("probability: more than 0 and at most 1")
			}
		}
		if r.Count < 0 {
			return nil, bad("count: not negative (0: no limit)")
		}
		c.left.Store(r.Count)
		set.rules = append(set.rules, c)
	}
	return set, nil
}

// plainText reports whether s is valid UTF-8 with no line break, control
// or bidirectional character: a rule's name and -ERR text are printed by
// terminals (ssgen chaos, ssgen get) and logs.
func plainText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\t' || textsafe.Hidden(r) || textsafe.LineBreak(r) {
			return false
		}
	}
	return true
}

// chaosHit is the effect a request gets.
type chaosHit struct {
	rule   *chaosRule
	effect string
	delay  time.Duration
	// why is the reason in the trace and the log.
	why string
}

// match returns the effect of the first rule that matches the request and
// fires (its probability, its count), or nil.
func (s *chaosSet) match(client string, args [][]byte) *chaosHit {
	if len(args) == 0 {
		return nil
	}
	verb := args[0]
	for _, r := range s.rules {
		if r.verbs != nil && !slices.ContainsFunc(r.verbs, func(v string) bool { return string(verb) == v }) {
			continue
		}
		if r.key != nil && (len(args) < 2 || !r.key.Match(string(args[1]))) {
			continue
		}
		if r.client != nil && !r.client.Match(client) {
			continue
		}
		if r.p < 1 && s.dice() >= r.p {
			continue
		}
		if !r.take() {
			continue
		}
		r.fired.Add(1)
		h := &chaosHit{rule: r, effect: r.Effect, delay: time.Duration(r.Delay)}
		switch r.Effect {
		case ChaosError:
			h.why = "injected by chaos rule " + quoteValue(r.name) + ": -ERR answered, the request not run"
		case ChaosDrop:
			h.why = "injected by chaos rule " + quoteValue(r.name) + ": no answer"
		case ChaosDelay:
			h.why = "injected by chaos rule " + quoteValue(r.name) + ": answer held " + r.Delay.String()
		case ChaosDisconnect:
			h.why = "injected by chaos rule " + quoteValue(r.name) + ": client disconnected, the request not run"
		}
		return h
	}
	return nil
}

// inject is in's chaos decision, nil without rules.
func inject(in *inbound, client string, args [][]byte) *chaosHit {
	if in.Inject == nil {
		return nil
	}
	return in.Inject(client, args)
}

// take counts one firing against the rule's Count.
func (r *chaosRule) take() bool {
	if r.Count == 0 {
		return true
	}
	for {
		left := r.left.Load()
		if left <= 0 {
			return false
		}
		if r.left.CompareAndSwap(left, left-1) {
			return true
		}
	}
}

// ChaosStatus is a rule in force and how it fired.
type ChaosStatus struct {
	ChaosRule
	// Fired counts the requests the rule gave its effect to.
	Fired int64 `json:"fired"`
	// Left is how many more it will affect, when it has a Count.
	Left *int64 `json:"left,omitempty"`
}

// SetChaos replaces the server's chaos rules (nil or empty: none), checked
// first: on an error (wrapping ErrInvalidChaos) the rules in force stay.
// Counts start again.
func (s *Server) SetChaos(rules []ChaosRule) error {
	set, err := compileChaos(rules)
	if err != nil {
		return err
	}
	if len(set.rules) == 0 {
		set = nil
	}
	s.chaos.Store(set)
	if set != nil {
		s.log.Info("chaos rules set", "rules", len(set.rules))
	} else {
		s.log.Info("chaos rules cleared")
	}
	return nil
}

// Chaos returns the chaos rules in force, with their counters.
func (s *Server) Chaos() []ChaosStatus {
	set := s.chaos.Load()
	if set == nil {
		return nil
	}
	out := make([]ChaosStatus, len(set.rules))
	for i, r := range set.rules {
		out[i] = ChaosStatus{ChaosRule: r.ChaosRule, Fired: r.fired.Load()}
		if r.Count > 0 {
			left := r.left.Load()
			out[i].Left = &left
		}
	}
	return out
}

// injector returns the chaos decision of the rules in force for the
// envelope, nil when there are none.
func (s *Server) injector() func(client string, args [][]byte) *chaosHit {
	set := s.chaos.Load()
	if set == nil {
		return nil
	}
	return set.match
}

// Bounds of the answers chaos delay rules hold at once: past them a
// matching request is answered at once (logged), so a flood of requests
// under a delay rule cannot grow the server's memory without end.
const (
	MaxHeldAnswers          = 1024
	MaxHeldAnswersPerClient = 64
)

// delays holds the answers chaos delays, so that Close can stop them.
type delays struct {
	mu      sync.Mutex
	pending map[*byte]*time.Timer
	closed  bool
	wg      sync.WaitGroup
	// held counts the answers held per client; perClient and total
	// bound them (MaxHeldAnswersPerClient, MaxHeldAnswers when 0).
	held             map[string]int
	perClient, total int
}

// after runs f after d, unless close comes first, and reports true; it
// reports false, and does nothing, when client or the server holds as
// many answers as they may.
func (d *delays) after(client string, dur time.Duration, f func()) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return true // dropped, as held answers are on close
	}
	perClient, total := d.perClient, d.total
	if perClient == 0 {
		perClient, total = MaxHeldAnswersPerClient, MaxHeldAnswers
	}
	if len(d.pending) >= total || d.held[client] >= perClient {
		return false
	}
	if d.pending == nil {
		d.pending = make(map[*byte]*time.Timer)
		d.held = make(map[string]int)
	}
	d.held[client]++
	tok := new(byte)
	d.wg.Add(1)
	d.pending[tok] = time.AfterFunc(dur, func() {
		defer d.wg.Done()
		d.mu.Lock()
		_, live := d.pending[tok]
		if live {
			delete(d.pending, tok)
			if d.held[client]--; d.held[client] <= 0 {
				delete(d.held, client)
			}
		}
		d.mu.Unlock()
		if live {
			f()
		}
	})
	return true
}

// count returns how many answers are held.
func (d *delays) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

// close drops the answers still held and waits for those being sent.
func (d *delays) close() {
	d.mu.Lock()
	d.closed = true
	for tok, t := range d.pending {
		if t.Stop() {
			d.wg.Done()
		}
		delete(d.pending, tok)
	}
	clear(d.held)
	d.mu.Unlock()
	d.wg.Wait()
}

// chaosJSON writes the rules in force as the HTTP API answers them.
func chaosJSON(st []ChaosStatus) []byte {
	if st == nil {
		st = []ChaosStatus{}
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(struct {
		Rules []ChaosStatus `json:"rules"`
	}{st})
	return b.Bytes()
}
