package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/schema"
)

func init() {
	register(verb{name: "migrate", summary: "plan, apply, validate or roll back a migration of stored values to the schema", run: runMigrate})
}

// exitInterrupted is the exit code of an apply stopped by Ctrl-C (128+SIGINT).
const exitInterrupted = 130

// migrateSubs are the migrate verbs, in the order help lists them.
var migrateSubs []struct {
	name, summary string
	run           func(ctx context.Context, env *cliEnv, args []string) error
}

// migrateSummaries are the migrate verbs' one-line summaries.
var migrateSummaries = map[string]string{
	"plan":     "say which declarations' stored values a migration rewrites, with counts from the store",
	"apply":    "rewrite every outdated value to the form the schema writes (backup first, resumable)",
	"validate": "count every declaration's keys: current, outdated, invalid (exit 1 unless all current)",
	"rollback": "restore a backup written by apply, for keys that still hold what it wrote",
}

func init() {
	for _, s := range []struct {
		name string
		run  func(ctx context.Context, env *cliEnv, args []string) error
	}{{"plan", runMigratePlan}, {"apply", runMigrateApply}, {"validate", runMigrateValidate}, {"rollback", runMigrateRollback}} {
		migrateSubs = append(migrateSubs, struct {
			name, summary string
			run           func(ctx context.Context, env *cliEnv, args []string) error
		}{s.name, migrateSummaries[s.name], s.run})
	}
}

const migrateUsage = "plan|apply|validate|rollback [flags]\n\n" +
	"Moves the values of a state store to the form the schema writes today\n" +
	"(renamed_from, default and removed fields, renamed enum values): see\n" +
	"docs/cli.md, \"ssgen migrate\". Versioned types whose earlier versions need\n" +
	"Go conversion functions migrate only from Go, through the generated\n" +
	"package's Migrations().\n\nverbs:"

func runMigrate(ctx context.Context, env *cliEnv, args []string) error {
	// The verb may follow flags (ssgen migrate --broker URL apply): it is
	// the first argument that names one, before any "--".
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, s := range migrateSubs {
			if a == s.name {
				rest := append(append([]string{}, args[:i]...), args[i+1:]...)
				if err := s.run(ctx, env, rest); err != nil {
					return &subVerbError{name: "migrate " + s.name, err: err}
				}
				return nil
			}
		}
	}
	fs := newFlagSet(env, "migrate", migrateUsage)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "%s\n\n", sentence(verbs["migrate"].summary))
		fmt.Fprintf(env.stderr, "usage: ssgen migrate %s\n", migrateUsage)
		for _, s := range migrateSubs {
			fmt.Fprintf(env.stderr, "  %-9s %s\n", s.name, s.summary)
		}
		fmt.Fprintln(env.stderr, "\nssgen migrate VERB --help describes a verb.")
	}
	if len(args) == 0 {
		return usageErrorf("want a verb: plan, apply, validate or rollback (see ssgen migrate --help)")
	}
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	return usageErrorf("unknown migrate verb %q: want plan, apply, validate or rollback", args[0])
}

// migrateFlags are the flags every migrate verb that reads the schema shares.
type migrateFlags struct {
	conn   connFlags
	schema schemaFlags
}

func (m *migrateFlags) register(fs *flag.FlagSet) {
	m.conn.register(fs)
	fs.StringVar(&m.schema.file, "schema", "", "the schema `FILE` (default: $"+schemaEnv+", else ./"+defaultSchemaFile+")")
}

// load loads the schema; a migrate verb cannot run without one.
func (m *migrateFlags) load(env *cliEnv) (*schema.Schema, error) {
	s, err := m.schema.load(env)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, usageErrorf("no schema: name one with --schema FILE or $%s, or run in the directory of %s", schemaEnv, defaultSchemaFile)
	}
	return s, nil
}

// newMigrateFlagSet is newFlagSet for "migrate VERB".
func newMigrateFlagSet(env *cliEnv, name, usage string) *flag.FlagSet {
	fs := newFlagSet(env, "migrate "+name, usage)
	fs.Usage = func() {
		if s, ok := migrateSummaries[name]; ok {
			fmt.Fprintf(env.stderr, "%s\n\n", sentence(s))
		}
		fmt.Fprintf(env.stderr, "usage: ssgen migrate %s %s\n", name, usage)
		printFlags(env.stderr, fs)
	}
	return fs
}

// migDecl is one declared key of the schema as a migration sees it.
type migDecl struct {
	key      *schema.Key
	rewrites schemaval.Rewrites
	codec    *schemaval.Codec
	pattern  string
	// overlaps names another declaration the pattern also lists: such a
	// declaration is left out of apply (its keys could be read with the
	// wrong type).
	overlaps string
}

func (d *migDecl) name() string { return d.key.QualifiedName() }

// declsOf returns every declared key of s, in AllKeys order.
func declsOf(s *schema.Schema) []*migDecl {
	var out []*migDecl
	keys := s.AllKeys()
	for _, k := range keys {
		d := &migDecl{key: k, rewrites: schemaval.RewritesOf(k), codec: schemaval.ForKey(k)}
		p := k.FullPath()
		glob, exact := p.Glob()
		if exact {
			glob = runtime.GlobEscape(glob)
		} else {
			for _, o := range keys {
				if o == k {
					continue
				}
				reaches := p.GlobReaches(o.FullPath())
				for _, e := range o.FullMovedFroms() {
					reaches = reaches || p.GlobReaches(e)
				}
				if reaches {
					d.overlaps = o.QualifiedName()
					break
				}
			}
			if d.overlaps == "" {
				for _, l := range s.AllLocks() {
					if p.GlobReaches(l.FullPath()) {
						d.overlaps = "lock " + l.QualifiedName()
						break
					}
				}
			}
		}
		d.pattern = glob
		out = append(out, d)
	}
	return out
}

// tally is what listing one declaration's keys found, by version for a
// versioned type.
type tally struct {
	migrate.Counts
	NeedsGo   int64         `json:"needsGo,omitempty"`   // outdated, at a version only Go converts
	ByVersion map[int]int64 `json:"byVersion,omitempty"` // versioned types: keys per stored version
	// FirstInvalid is why the first invalid key did not decode.
	FirstInvalid string `json:"firstInvalid,omitempty"`
}

// countingCodec is the codec Validate reads a declaration's keys through:
// a key at a version only Go converts counts as outdated (and NeedsGo),
// not invalid; a declaration whose values never change only decodes.
type countingCodec struct {
	d  *migDecl
	mu sync.Mutex
	t  *tally
}

func (c *countingCodec) Current(data []byte) ([]byte, error) {
	cur, err := c.current(data)
	if err != nil {
		c.mu.Lock()
		if c.t.FirstInvalid == "" {
			c.t.FirstInvalid = clip(err.Error(), 200)
		}
		c.mu.Unlock()
	}
	return cur, err
}

func (c *countingCodec) current(data []byte) ([]byte, error) {
	if v, ok := c.d.codec.StoredVersion(data); ok {
		c.mu.Lock()
		c.t.ByVersion[v]++
		c.mu.Unlock()
	}
	if !c.d.rewrites.Any() {
		if _, err := c.d.codec.Decode(data); err != nil {
			return nil, err
		}
		return data, nil
	}
	cur, err := c.d.codec.Current(data)
	if errors.Is(err, schemaval.ErrNeedsConversion) {
		if _, derr := c.d.codec.Decode(data); derr != nil {
			return nil, derr
		}
		c.mu.Lock()
		c.t.NeedsGo++
		c.mu.Unlock()
		// Never written: Validate only compares it with the stored bytes.
		return append(append([]byte{}, data...), 0), nil
	}
	return cur, err
}

// countKeys lists and reads the keys of decls.
func countKeys(ctx context.Context, c *runtime.Client, decls []*migDecl) ([]tally, error) {
	out := make([]tally, len(decls))
	md := make([]migrate.Decl, len(decls))
	for i, d := range decls {
		out[i].ByVersion = map[int]int64{}
		md[i] = migrate.Decl{Name: d.name(), Pattern: d.pattern, Codec: &countingCodec{d: d, t: &out[i]}}
	}
	counts, err := migrate.Validate(ctx, c, md)
	for i := range counts {
		out[i].Counts = counts[i]
		if len(out[i].ByVersion) == 0 {
			out[i].ByVersion = nil
		}
	}
	return out, err
}

// byVersion spells a tally's counts per version: "v1: 3, v2: 5".
func (t tally) byVersion() string {
	if len(t.ByVersion) == 0 {
		return ""
	}
	vs := make([]int, 0, len(t.ByVersion))
	for v := range t.ByVersion {
		vs = append(vs, v)
	}
	sort.Ints(vs)
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("v%d: %d", v, t.ByVersion[v])
	}
	return strings.Join(parts, ", ")
}

// describeRewrite says why a declaration's values are rewritten.
func describeRewrite(d *migDecl) string {
	var why []string
	if d.rewrites.Evolves {
		why = append(why, "earlier forms of its type (renamed_from, default, removed fields, renamed enum values) are rewritten")
	}
	if v := d.rewrites.Versioned; v != nil {
		why = append(why, fmt.Sprintf("versioned %s: values at another version than %d need Go conversions", v.Name, v.WriteVersion))
	}
	return strings.Join(why, "; ")
}

// entryPointHint says where the Go conversions run.
const entryPointHint = "the CLI cannot run Go conversions: run migrate.Apply from Go with the generated package's Migrations() (docs/generated-api.md, \"Migrations\")"

// askYes asks a yes/no question on stderr and reads the answer from stdin:
// only "y" or "yes" is yes. An interrupt (ctx) while it waits is a no.
func askYes(ctx context.Context, env *cliEnv, question string) bool {
	fmt.Fprintf(env.stderr, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(io.LimitReader(env.stdin, 256)).ReadString('\n')
		answer <- line
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(env.stderr)
		return false
	case line := <-answer:
		a := strings.ToLower(strings.TrimSpace(line))
		return a == "y" || a == "yes"
	}
}

// createBackup creates the backup file: name when given, else a new file
// in the current directory named after the migration and the time. An
// existing file is never overwritten.
func createBackup(name, migration string, now time.Time) (*os.File, error) {
	if name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return nil, usageErrorf("--backup %s: the file exists, and a backup never overwrites one: name a new file", name)
		}
		if err != nil {
			return nil, usageErrorf("--backup: %v", err)
		}
		return f, nil
	}
	base := "ssgen-migrate-" + safeFileName(migration) + "-" + now.UTC().Format("20060102T150405Z")
	for i := 1; i < 1000; i++ {
		n := base + ".jsonl"
		if i > 1 {
			n = fmt.Sprintf("%s-%d.jsonl", base, i)
		}
		f, err := os.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, usageErrorf("backup file: %v (--backup FILE names another)", err)
		}
		return f, nil
	}
	return nil, usageErrorf("backup file: %s* all exist (--backup FILE names another)", base)
}

// safeFileName keeps letters, digits, '-', '_' and '.' of s, bounded.
func safeFileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case b.Len() >= 40:
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// lazyBackup is apply's backup file, created by its first write
// (createBackup): name it named, or a new name in the current directory.
type lazyBackup struct {
	name, migration string
	now             time.Time
	created         func(name string)
	f               *os.File
	err             error
}

func (l *lazyBackup) Write(p []byte) (int, error) {
	if l.f == nil && l.err == nil {
		if l.f, l.err = createBackup(l.name, l.migration, l.now); l.err == nil {
			l.created(l.f.Name())
		}
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.f.Write(p)
}

// Name is the file's name, "" when none was made.
func (l *lazyBackup) Name() string {
	if l.f == nil {
		return ""
	}
	return l.f.Name()
}

// Close syncs and closes the file, if one was made.
func (l *lazyBackup) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
