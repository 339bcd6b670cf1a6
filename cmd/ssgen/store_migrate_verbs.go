package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/schema"
)

const migratePlanUsage = "[--against REF|FILE] [--schema FILE] [flags]\n\n" +
	"Lists the declarations whose stored values a migration rewrites, and counts\n" +
	"their keys in the store: current, outdated (apply rewrites them), invalid\n" +
	"(they do not decode), and by version for a versioned type. A versioned\n" +
	"type's values at another version than its write_version need the user's\n" +
	"Go conversions: the plan says so, and apply refuses them. With --against\n" +
	"(a file or a git revision, read as ssgen breaking reads it), the plan first\n" +
	"lists what changed since then.\n\nflags:"

func runMigratePlan(ctx context.Context, env *cliEnv, args []string) error {
	fs := newMigrateFlagSet(env, "plan", migratePlanUsage)
	var mf migrateFlags
	mf.register(fs)
	against := fs.String("against", "", "first list what changed since the older schema `REF`: a git revision, or a file")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q (the schema is --schema FILE)", pos[0])
	}
	s, err := mf.load(env)
	if err != nil {
		return err
	}
	out := env.stdout
	if *against != "" {
		oldName, oldSrc, err := readAgainst(ctx, *against, mf.schema.used)
		switch {
		case errors.Is(err, errNotInRevision):
			fmt.Fprintf(out, "changes since %s: the schema is new there; every stored value was written by this schema\n", *against)
		case err != nil:
			return &exitError{code: exitUsage, err: err}
		default:
			oldS, err := schema.Load(oldName, oldSrc)
			if err := schemaError(env, err); err != nil {
				return err
			}
			changes := schema.Compare(oldS, s)
			fmt.Fprintf(out, "changes since %s: %d\n", *against, len(changes))
			for _, c := range changes {
				fmt.Fprintf(out, "  %s\n", c)
			}
		}
	}
	decls := declsOf(s)
	var todo []*migDecl
	for _, d := range decls {
		if d.rewrites.Any() {
			todo = append(todo, d)
		}
	}
	var moved []string
	for _, d := range decls {
		if d.key.Moved() {
			var from []string
			for _, p := range d.key.FullMovedFroms() {
				from = append(from, p.String())
			}
			moved = append(moved, fmt.Sprintf("%s (from %s)", d.name(), strings.Join(from, ", ")))
		}
	}
	if len(todo) == 0 {
		fmt.Fprintln(out, "no declaration's stored values change form: nothing to migrate")
		printMoved(out, moved)
		return nil
	}
	c, err := mf.conn.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	tallies, err := countKeys(ctx, c, todo)
	if err != nil {
		return opError("listing keys", err)
	}
	fmt.Fprintf(out, "declarations whose stored values are rewritten: %d\n", len(todo))
	var outdated, needsGo int64
	for i, d := range todo {
		t := tallies[i]
		fmt.Fprintf(out, "  %s (%s, %s): %s\n", d.name(), d.key.FullPath(), d.key.Type, describeRewrite(d))
		line := fmt.Sprintf("    keys: %d current, %d outdated, %d invalid", t.Current, t.Outdated, t.Invalid)
		if bv := t.byVersion(); bv != "" {
			line += " (" + bv + ")"
		}
		fmt.Fprintln(out, line)
		if t.FirstInvalid != "" {
			fmt.Fprintf(out, "    the first invalid: %s\n", terminalSafe(t.FirstInvalid))
		}
		if t.NeedsGo > 0 {
			fmt.Fprintf(out, "    %d need a Go conversion (%s)\n", t.NeedsGo, conversionNames(d))
		}
		if d.overlaps != "" {
			fmt.Fprintf(out, "    its keys' pattern %q also lists keys of %s: apply leaves it out\n", d.pattern, d.overlaps)
		}
		outdated += t.Outdated - t.NeedsGo
		needsGo += t.NeedsGo
	}
	printMoved(out, moved)
	switch {
	case needsGo > 0:
		fmt.Fprintf(out, "plan: %d keys to rewrite, %d need Go conversions: %s\n", outdated, needsGo, entryPointHint)
	default:
		fmt.Fprintf(out, "plan: %d keys to rewrite (ssgen migrate apply)\n", outdated)
	}
	return nil
}

func printMoved(out interface{ Write([]byte) (int, error) }, moved []string) {
	if len(moved) == 0 {
		return
	}
	fmt.Fprintf(out, "moved keys (renamed_from), not moved by migrate: reads fall back to the earlier key, and the next write moves it: %s\n", strings.Join(moved, "; "))
}

// conversionNames names the Go functions a versioned declaration's
// earlier versions convert through.
func conversionNames(d *migDecl) string {
	v := d.rewrites.Versioned
	if v == nil {
		return ""
	}
	var names []string
	for _, pv := range v.Previous {
		if pv.Version != v.WriteVersion {
			names = append(names, pv.ConvertFuncName())
		}
	}
	if w := v.VersionOf(v.WriteVersion); w != nil && w != v {
		names = append(names, w.ConvertBackFuncName())
	}
	return strings.Join(names, ", ")
}

const migrateApplyUsage = "[--rate N] [--backup FILE] [--name NAME] [--yes] [--schema FILE] [flags]\n\n" +
	"Rewrites every outdated value of the schema's declarations to the form the\n" +
	"schema writes. Each key is backed up first (one JSON line: key, old and new\n" +
	"bytes, version) to a new file, named on stderr; then deleted only if it\n" +
	"still holds what was read, and set only if still absent: a reader sees the\n" +
	"key absent in between, and its TTL is not kept. A key a writer changes\n" +
	"meanwhile is read again, never overwritten; a delete in between is lost (the\n" +
	"key reappears migrated). One migrator runs at a time (a lease in the store);\n" +
	"its position is saved after each completed page, so apply after an\n" +
	"interruption (Ctrl-C: exit 130) resumes from there, and then counts every\n" +
	"key. On a terminal it asks first (--yes does not) and draws a progress bar;\n" +
	"otherwise it asks nothing and writes one JSON line per progress report on\n" +
	"stderr. A plan that needs Go conversions is refused.\n\n" +
	"Exit status: 0 when done, 1 when a key failed or another migrator runs or\n" +
	"Go conversions are needed or a resumed run left keys outdated, 2 on bad\n" +
	"usage or connection errors, 130 when interrupted.\n\nflags:"

func runMigrateApply(ctx context.Context, env *cliEnv, args []string) error {
	fs := newMigrateFlagSet(env, "apply", migrateApplyUsage)
	var mf migrateFlags
	mf.register(fs)
	rate := fs.Float64("rate", 0, "read at most `N` keys per second (0: unbounded); the outdated keys of each page of 500 are then rewritten 8 at a time")
	backup := onceFlag(fs, "backup", "write the backup to `FILE`, which must not exist (default: a new file in the current directory)")
	name := fs.String("name", "default", "the migration's `NAME`: its lease and saved position")
	yes := fs.Bool("yes", false, "do not ask for confirmation on a terminal")
	restart := fs.Bool("restart", false, "discard a saved position (of another schema or declarations) and start over")
	wait := fs.Bool("wait", false, "wait for another migrator of this NAME to finish instead of failing")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if *rate < 0 {
		return usageErrorf("--rate must not be negative, got %v", *rate)
	}
	if *name == "" || strings.ContainsAny(*name, "/*?[\\") || len(*name) > 64 {
		return usageErrorf("--name %q: want 1 to 64 characters, none of / * ? [ \\", *name)
	}
	s, err := mf.load(env)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(mf.schema.used)
	if err != nil {
		return usageErrorf("%v", err)
	}
	sum := sha256.Sum256(src)
	schemaID := hex.EncodeToString(sum[:])
	todo, decls, versioned := applyDecls(env, s, "apply")
	if len(decls) == 0 {
		fmt.Fprintln(env.stdout, "no declaration's stored values change form: nothing to migrate")
		return nil
	}
	c, err := mf.conn.dial(ctx, env, false)
	if err != nil {
		return err
	}
	defer c.Close()
	if versioned {
		// Refused before anything is written: keys only Go converts.
		tallies, err := countKeys(ctx, c, todo)
		if err != nil {
			return opError("listing keys", err)
		}
		var why []string
		for i, t := range tallies {
			if t.NeedsGo > 0 {
				why = append(why, fmt.Sprintf("%s: %d keys need %s", todo[i].name(), t.NeedsGo, conversionNames(todo[i])))
			}
		}
		if len(why) > 0 {
			return &exitError{code: exitNegative, err: fmt.Errorf("refused, nothing written: %s; %s", strings.Join(why, "; "), entryPointHint)}
		}
	}
	if isTerminal(env.stdin) && !*yes {
		names := make([]string, len(todo))
		for i, d := range todo {
			names[i] = d.name()
		}
		if !askYes(ctx, env, fmt.Sprintf("rewrite the outdated values of %s in %s?", strings.Join(names, ", "), env.broker)) {
			if ctx.Err() != nil {
				return &exitError{code: exitInterrupted, err: errors.New("interrupted: nothing written")}
			}
			return &exitError{code: exitNegative, err: errors.New("not confirmed: nothing written")}
		}
	}
	if *backup != "" {
		if _, err := os.Lstat(*backup); err == nil {
			return usageErrorf("--backup %s: the file exists, and a backup never overwrites one: name a new file", *backup)
		}
	}
	// The file is made when the first key is backed up: a run with
	// nothing to rewrite, or refused, leaves none.
	pr := newProgress(env.stderr, isTerminal(env.stderr))
	f := &lazyBackup{name: *backup, migration: *name, now: time.Now(), created: func(n string) {
		pr.note("ssgen migrate apply: backup: " + n)
	}}
	pages := 0 // pages completed by this run: Progress follows each page's saved position
	report := func(p migrate.Progress) { pages++; pr.report(p) }
	waiting := func(lock, holder []byte) {
		pr.note("ssgen migrate apply: waiting for the migration lock " + lockHeld(lock, holder))
	}
	guardWaiting := func(lock, holder []byte) { pr.note(guardHeld(lock, holder)) }
	res, err := migrate.Apply(ctx, c, decls, migrate.Options{Name: *name, SchemaID: schemaID, Restart: *restart, Wait: *wait, Waiting: waiting, GuardWaiting: guardWaiting, Backup: f, Rate: *rate, Progress: report})
	pr.finish()
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	summary := fmt.Sprintf("%d keys seen, %d rewritten, %d failed; backup %s", res.Seen, res.Rewritten, res.Failed, f.Name())
	if f.Name() == "" {
		summary = fmt.Sprintf("%d keys seen, %d rewritten, %d failed; no backup (nothing was rewritten)", res.Seen, res.Rewritten, res.Failed)
	}
	if res.Resumed {
		summary = "resumed: " + summary
	}
	switch {
	case ctx.Err() != nil && !res.Locked:
		fmt.Fprintf(env.stderr, "ssgen migrate apply: interrupted while waiting for the migration lock %s: nothing written\n", terminalSafe(migrate.Prefix+*name+"/lock"))
		return &exitError{code: exitInterrupted, err: errors.New("")}
	case ctx.Err() != nil && pages > 0:
		fmt.Fprintf(env.stderr, "ssgen migrate apply: interrupted: %s; the position after the last completed page is saved: run ssgen migrate apply --name %s again to resume from there (it reads the unfinished page again and leaves its rewritten keys alone)\n", summary, *name)
		return &exitError{code: exitInterrupted, err: errors.New("")}
	case ctx.Err() != nil:
		from := "from the first key"
		if res.Resumed {
			from = "from the position this run resumed"
		}
		fmt.Fprintf(env.stderr, "ssgen migrate apply: interrupted before it completed a page: %s; no position was saved by this run: run ssgen migrate apply --name %s again to start %s (keys already rewritten are left alone)\n", summary, *name, from)
		return &exitError{code: exitInterrupted, err: errors.New("")}
	case errors.Is(err, migrate.ErrPositionMismatch):
		var pm *migrate.PositionMismatchError
		errors.As(err, &pm)
		return &exitError{code: exitNegative, err: fmt.Errorf("migration %q: the saved position (declaration %s, schema %s) %s; nothing written: resume it with the schema of that run, or run apply --restart to discard it and walk every key", *name, terminalSafe(clip(pm.SavedDecl, 64)), terminalSafe(clip(pm.SavedSchema, 64)), pm.Reason)}
	case errors.Is(err, migrate.ErrBusy):
		lock := []byte(migrate.Prefix + *name + "/lock")
		holder, _, gerr := c.Get(ctx, lock)
		if gerr != nil {
			holder = nil
		}
		return &exitError{code: exitNegative, err: fmt.Errorf("another migrator named %q is running or its lock is held: the migration lock %s; nothing written (--wait waits for it)", *name, lockHeld(lock, holder))}
	case err != nil:
		return opError("apply", err)
	}
	fmt.Fprintf(env.stdout, "migrated: %s\n", summary)
	if res.Resumed {
		// The saved position is a key anyone who can write $ssgen/migrate/
		// can set: a resumed run proves nothing about the keys before it.
		counts, err := migrate.Validate(ctx, c, decls)
		if err != nil {
			return opError("counting the keys after a resumed run", err)
		}
		var outdated, invalid int64
		for _, n := range counts {
			outdated += n.Outdated
			invalid += n.Invalid
		}
		if outdated > 0 {
			return &exitError{code: exitNegative, err: fmt.Errorf("the run resumed a saved position, and %d keys are still outdated (%d invalid): the position skipped them; ssgen migrate apply --restart walks every key", outdated, invalid)}
		}
	}
	if res.Failed > 0 {
		return &exitError{code: exitNegative, err: fmt.Errorf("%d keys left as they were; the first: %v", res.Failed, res.FirstError)}
	}
	return nil
}

const migrateValidateUsage = "[--schema FILE] [flags]\n\n" +
	"Reads every key of the schema's declarations and counts them: current (as\n" +
	"the schema writes them), outdated (apply rewrites them, or for a versioned\n" +
	"type they need a Go conversion) and invalid (they do not decode), and by\n" +
	"version for a versioned type.\n\n" +
	"Exit status: 0 when every key is current, 1 when any is outdated or\n" +
	"invalid, 2 on bad usage or connection errors.\n\nflags:"

func runMigrateValidate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newMigrateFlagSet(env, "validate", migrateValidateUsage)
	var mf migrateFlags
	mf.register(fs)
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	s, err := mf.load(env)
	if err != nil {
		return err
	}
	decls := declsOf(s)
	c, err := mf.conn.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	tallies, err := countKeys(ctx, c, decls)
	if err != nil {
		return opError("listing keys", err)
	}
	var bad int64
	for i, d := range decls {
		t := tallies[i]
		line := fmt.Sprintf("%s: %d current, %d outdated, %d invalid", d.name(), t.Current, t.Outdated, t.Invalid)
		if bv := t.byVersion(); bv != "" {
			line += " (" + bv + ")"
		}
		if t.NeedsGo > 0 {
			line += fmt.Sprintf("; %d need a Go conversion", t.NeedsGo)
		}
		if t.FirstInvalid != "" {
			line += "; the first invalid: " + terminalSafe(t.FirstInvalid)
		}
		if d.overlaps != "" {
			line += fmt.Sprintf(" (its keys' pattern %q also lists keys of %s: they are counted here too)", d.pattern, d.overlaps)
		}
		fmt.Fprintln(env.stdout, line)
		bad += t.Outdated + t.Invalid
	}
	if bad > 0 {
		return &exitError{code: exitNegative, err: fmt.Errorf("%s outdated or invalid", outdatedCount(bad))}
	}
	return nil
}

const migrateRollbackUsage = "--backup FILE [--schema FILE] [flags]\n\n" +
	"Restores the keys a backup written by ssgen migrate apply holds, newest line\n" +
	"first, but only those that still hold what the migration wrote (the version\n" +
	"its write gave them): a key changed since, even to the same bytes, is kept\n" +
	"as it is. Only keys of the declarations apply migrates with the schema are\n" +
	"restored, never a reserved key ($ssgen/...): other lines are skipped and\n" +
	"listed with the reason. A resumed apply wrote one backup per run: roll them\n" +
	"back newest first.\n\n" +
	"Exit status: 0 when every key was restored or kept, 1 when a line was\n" +
	"refused, 2 on bad usage or connection errors.\n\nflags:"

func runMigrateRollback(ctx context.Context, env *cliEnv, args []string) error {
	fs := newMigrateFlagSet(env, "rollback", migrateRollbackUsage)
	var mf migrateFlags
	mf.register(fs)
	backup := onceFlag(fs, "backup", "the backup `FILE` apply wrote (required; one file: roll several back newest first, one run each)")
	pos, _, help, err := parseArgs(fs, args, 0)
	if help || err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if *backup == "" {
		return usageErrorf("--backup FILE is required")
	}
	s, err := mf.load(env)
	if err != nil {
		return err
	}
	_, decls, _ := applyDecls(env, s, "rollback")
	if decls == nil {
		decls = []migrate.Decl{} // no declaration: every line is refused
	}
	f, err := os.Open(*backup)
	if err != nil {
		return usageErrorf("--backup: %v", err)
	}
	defer f.Close()
	c, err := mf.conn.dial(ctx, env, true)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := migrate.RollbackWith(ctx, c, f, migrate.RollbackOptions{Decls: decls})
	if err != nil {
		return opError("rollback", err)
	}
	for _, k := range res.Skipped {
		fmt.Fprintf(env.stdout, "  skipped %s: %s\n", terminalSafe(fmt.Sprintf("%.200q", k.Key)), k.Reason)
	}
	if more := res.Kept + res.Refused - int64(len(res.Skipped)); more > 0 {
		fmt.Fprintf(env.stdout, "  and %d more skipped\n", more)
	}
	fmt.Fprintf(env.stdout, "rolled back: %d keys restored, %d kept (changed since the migration), %d refused (reserved, undeclared, not written by the migration, or old bytes that do not decode)\n", res.Restored, res.Kept, res.Refused)
	if res.Refused > 0 {
		return &exitError{code: exitNegative, err: fmt.Errorf("%d backup keys refused: the backup names keys the migration of this schema did not write, or old bytes that are not values of their declaration", res.Refused)}
	}
	return nil
}

// applyDecls are the declarations apply migrates (and rollback
// restores): those whose stored values change form, less those whose
// pattern lists keys of another declaration (said on stderr).
func applyDecls(env *cliEnv, s *schema.Schema, verb string) (todo []*migDecl, decls []migrate.Decl, versioned bool) {
	resolver := schemaval.NewResolver(s)
	for _, d := range declsOf(s) {
		switch {
		case !d.rewrites.Any():
		case d.overlaps != "":
			fmt.Fprintf(env.stderr, "ssgen migrate %s: %s left out: its keys' pattern %q also lists keys of %s\n", verb, d.name(), d.pattern, d.overlaps)
		default:
			todo = append(todo, d)
			decls = append(decls, migrate.Decl{Name: d.name(), Pattern: d.pattern, Codec: d.codec, Guard: guardOf(resolver, d), Decodes: decodes(d.codec)})
			versioned = versioned || d.rewrites.Versioned != nil
		}
	}
	return todo, decls, versioned
}

// lockHeld describes the migration lock key and what it holds (nil:
// unknown), with how to check and clear it: a migrator's lease holds
// CLIENTID/16 hex digits and expires within its TTL once the migrator
// stops, a value written by hand may never expire.
func lockHeld(lock, holder []byte) string {
	quoted := "'" + strings.ReplaceAll(string(lock), "'", `'\''`) + "'"
	s := string(lock)
	if holder != nil {
		s += " holds " + fmt.Sprintf("%.80q", holder)
		if !leaseHolderID(holder) {
			s += ", which is not a migrator's lease (CLIENTID/RANDOM): a value written by hand, which may have no TTL and never expire"
		}
	}
	return terminalSafe(s + "; a migrator's lease expires within 10 s of its migrator stopping: check it with ssgen get " + quoted +
		" and, if no migrator runs, clear it with ssgen del " + quoted)
}

// guardHeld says which guard lock apply waits for, and who holds it.
func guardHeld(lock, holder []byte) string {
	s := "ssgen migrate apply: waiting for the guard lock " + showKey(lock, false)
	if holder != nil {
		s += fmt.Sprintf(", held by %.80q", holder)
	}
	s += ": its keys are rewritten under its lease once the holder releases it or its lease expires"
	if holder != nil && !leaseHolderID(holder) && len(lock) <= maxShownKey {
		quoted := "'" + strings.ReplaceAll(string(lock), "'", `'\''`) + "'"
		s += "; that value is not a lease's id (CLIENTID/RANDOM) but one written by hand, which may have no TTL and never expire: check it with ssgen get " + quoted + " and, if no writer holds the lock, clear it with ssgen del " + quoted
	}
	return terminalSafe(s)
}

// leaseHolderID reports whether b has the form of a lease holder's id
// (runtime.Lock: the client id, "/", 16 hex digits).
func leaseHolderID(b []byte) bool {
	i := bytes.LastIndexByte(b, '/')
	if i < 1 || len(b)-i-1 != 16 {
		return false
	}
	_, err := hex.DecodeString(string(b[i+1:]))
	return err == nil
}

// decodes is migrate.Decl.Decodes of c: any declared version decodes
// (rollback restores no backup bytes that do not).
func decodes(c *schemaval.Codec) func([]byte) error {
	return func(v []byte) error {
		_, err := c.Decode(v)
		return err
	}
}

// guardOf gives the guard lock of each concrete key of d (nil when d's
// key has no guard): apply rewrites such keys under the lock's lease.
func guardOf(res *schemaval.Resolver, d *migDecl) func([]byte) ([]byte, bool) {
	if d.key.Guard == nil {
		return nil
	}
	return func(key []byte) ([]byte, bool) {
		m := resolve(res, key)
		if m == nil || m.Key != d.key || m.Earlier {
			return nil, false
		}
		gk, lock := m.GuardKey()
		return []byte(gk), lock != nil
	}
}

// outdatedCount is "1 key is", "2 keys are".
func outdatedCount(n int64) string {
	if n == 1 {
		return "1 key is"
	}
	return plural(int(n), "key") + " are"
}

// onceString is a string flag that may be given once: a second value is
// refused rather than silently replacing the first (rollback --backup A
// --backup B would otherwise roll back B alone).
type onceString struct {
	v   string
	set bool
}

func (o *onceString) String() string { return o.v }

func (o *onceString) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%q, then %q): name one file", o.v, s)
	}
	o.v, o.set = s, true
	return nil
}

// onceFlag defines a string flag that may be given at most once.
func onceFlag(fs *flag.FlagSet, name, usage string) *string {
	o := &onceString{}
	fs.Var(o, name, usage)
	return &o.v
}
