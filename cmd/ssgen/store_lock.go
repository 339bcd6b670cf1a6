package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ssgen/ssgen/runtime"
)

func init() {
	register(verb{name: "lock", summary: "run a command while holding a lock", run: runLock})
}

const lockUsage = "NAME [flags] [--] CMD [ARGS...]\n\n" +
	"Waits for the lock NAME, then runs CMD with SSGEN_FENCING_TOKEN (the lease's\n" +
	"fencing token at acquisition, an HLC) and SSGEN_LOCK_HOLDER (the id stored in\n" +
	"the lock key) in its environment. The lease renews every third of --ttl while\n" +
	"CMD runs and is released when it ends; ssgen then exits with CMD's exit code\n" +
	"(128+N if a signal N ended it). If renewals fail for so long that the lease\n" +
	"has only --grace plus a tenth of --ttl left, CMD gets SIGTERM, then SIGKILL\n" +
	"after --grace, so that it is dead before the lease can expire and the lock\n" +
	"pass to someone else; ssgen then exits 1, as when the lease is lost or --wait\n" +
	"passes first. --grace must be at most 2/5 of --ttl, so that a healthy lease\n" +
	"is never taken for a failing one (default: 5s, or 2/5 of --ttl if less).\n" +
	"An interrupt of ssgen stops CMD the same way. On Unix CMD runs in a process\n" +
	"group of its own and the signals go to the whole group, so what CMD started\n" +
	"stops with it; what it leaves running when it exits is stopped before the\n" +
	"lock is released.\n\nflags:"

func runLock(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "lock", lockUsage)
	var cf connFlags
	cf.register(fs)
	ttl := fs.Duration("ttl", 10*time.Second, "lease time to live; a holder that dies frees the lock after this")
	wait := fs.Duration("wait", 0, "give up (exit 1) if the lock is not acquired within this long; 0 waits forever")
	grace := fs.Duration("grace", defaultGrace, "time between SIGTERM and SIGKILL when CMD must stop; at most 2/5 of --ttl, which also caps the default")
	keyHex := fs.Bool("key-hex", false, "NAME is given as hex")
	pos, command, help, err := parseArgs(fs, args, 1)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 || len(command) == 0 {
		return usageErrorf("want NAME and a command (see ssgen lock --help)")
	}
	if *ttl < time.Millisecond {
		return usageErrorf("--ttl must be at least 1ms, got %s", *ttl)
	}
	if *wait < 0 {
		return usageErrorf("--wait must not be negative, got %s", *wait)
	}
	if *grace < 0 {
		return usageErrorf("--grace must not be negative, got %s", *grace)
	}
	if !flagSet(fs, "grace") {
		*grace = min(defaultGrace, maxGrace(*ttl))
	} else if *grace > maxGrace(*ttl) {
		return usageErrorf("--grace %s does not fit inside --ttl %s: CMD must be dead before the lease can expire, so --grace may be at most 2/5 of --ttl (%s); raise --ttl to at least %s or lower --grace",
			*grace, *ttl, maxGrace(*ttl), minTTL(*grace))
	}
	name, err := keyArg(pos[0], *keyHex)
	if err != nil {
		return err
	}
	subject := showKey(name, *keyHex)

	c, err := cf.dial(ctx, env, false)
	if err != nil {
		return err
	}
	defer c.Close()

	// The lease outlives an interrupt: CMD may still write with its token
	// during the grace period, so only Release ends the renewal.
	leaseCtx, endLease := context.WithCancel(context.WithoutCancel(ctx))
	defer endLease()
	lease, err := acquire(ctx, leaseCtx, runtime.NewLock(c, name, *ttl), *wait)
	if err != nil {
		return lockError(subject, err)
	}
	// release gives the lock back, waiting at most bound (and --timeout).
	// Its error is for the caller to report after its own.
	released := false
	release := func(bound time.Duration) error {
		released = true
		if bound <= 0 {
			return nil // nothing left to give back
		}
		rctx, cancel := context.WithTimeout(context.Background(), min(bound, cf.timeout))
		defer cancel()
		if err := lease.Release(rctx); err != nil {
			return fmt.Errorf("release: %s (the lock expires by itself after --ttl)", libText(err))
		}
		return nil
	}
	defer func() {
		if !released {
			if err := release(cf.timeout); err != nil {
				fmt.Fprintf(env.stderr, "ssgen lock: %s: %v\n", subject, err)
			}
		}
	}()

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.stdin, env.stdout, env.stderr
	cmd.Env = append(os.Environ(),
		"SSGEN_FENCING_TOKEN="+lease.Token().String(),
		"SSGEN_LOCK_HOLDER="+string(lease.Holder()))
	// A grandchild that keeps CMD's output pipes open must not keep us
	// waiting once CMD itself has ended.
	cmd.WaitDelay = *grace
	restoreTerminal := ownGroup(cmd, env.stdin)
	if err := cmd.Start(); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("run %s: %w", command[0], err)}
	}
	defer restoreTerminal()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	stop := stopRule{grace: *grace, margin: killMargin(*ttl), deadline: lease.Deadline}
	var lost, late bool
	var left time.Duration // of the lease, when a late renewal made us stop CMD
	check := time.NewTimer(0)
	defer check.Stop()
supervise:
	for {
		select {
		case err = <-exited:
			restoreTerminal()
			if groupAlive(cmd) {
				// Work CMD left behind would run on without the lease.
				fmt.Fprintf(env.stderr, "ssgen lock: %s: %s exited; stopping what it left running in its process group\n", subject, command[0])
				stopGroup(cmd, nil, stop)
			}
			break supervise
		case <-lease.Lost():
			lost = true
			err = stopGroup(cmd, exited, stop)
			break supervise
		case <-ctx.Done():
			err = stopGroup(cmd, exited, stop)
			break supervise
		case <-check.C:
			// Renewals move the deadline on; while they succeed this only
			// re-arms the timer.
			term := stop.termAt()
			if d := time.Until(term); d > 0 {
				check.Reset(d)
				continue
			}
			late, left = true, time.Until(lease.Deadline())
			err = stopGroup(cmd, exited, stop)
			break supervise
		}
	}
	restoreTerminal()
	var primary error
	switch {
	case lost:
		// The lock is someone else's: there is nothing to release.
		_ = release(0)
		primary = fmt.Errorf("%s: %s; stopped %s", subject, libText(lease.Err()), command[0])
	case late:
		primary = lateError(subject, left, *ttl, command[0])
		// Renewals failed: the service is likely unreachable, and a release
		// is worth waiting for only while the lease is still ours.
		if rerr := release(time.Until(lease.Deadline())); rerr != nil {
			primary = fmt.Errorf("%w; %v", primary, rerr)
		}
	}
	if primary != nil {
		return &exitError{code: exitNegative, err: primary}
	}
	return commandExit(cmd, err)
}

// lateError says why CMD was stopped when the lease was not renewed in
// time. left is what remained of the lease when the stop began: negative
// when ssgen itself did not run meanwhile (paused, a suspended machine),
// and the lock may already have passed to another holder.
func lateError(subject string, left, ttl time.Duration, command string) error {
	if left <= 0 {
		return fmt.Errorf("%s: the lease expired %s ago without being renewed (was ssgen paused?): another holder may have taken the lock meanwhile, while %s ran on; stopped %s",
			subject, (-left).Round(time.Millisecond), command, command)
	}
	return fmt.Errorf("%s: the lease was not renewed in time (%s of its --ttl %s left); stopped %s before the lock could pass to another holder",
		subject, left.Round(time.Millisecond), ttl, command)
}

// How ssgen lock keeps CMD inside its lease. The runtime renews the lease
// every third of the TTL, so a healthy lease always has more than 2/3 of
// the TTL left. CMD is told to stop (SIGTERM) once the lease has only
// grace + margin left, and killed (SIGKILL) once it has margin left; the
// margin (a tenth of the TTL) covers the signal's delivery, scheduling
// and the difference between our clock and the service's. Limiting grace
// to 2/5 of the TTL keeps grace + margin at or below half of it, leaving at
// least a sixth of the TTL for a late or retried renewal before a lease
// that is only slow would be taken for one that is failing.
const defaultGrace = 5 * time.Second

// killMargin is how long before the lease's deadline CMD must be dead.
func killMargin(ttl time.Duration) time.Duration { return ttl / 10 }

// maxGrace is the longest --grace that fits inside ttl.
func maxGrace(ttl time.Duration) time.Duration { return ttl * 2 / 5 }

// minTTL is the shortest --ttl that admits grace.
func minTTL(grace time.Duration) time.Duration { return (grace*5 + 1) / 2 }

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// stopRule says when CMD must get SIGTERM and SIGKILL, from the lease's
// current deadline (which renewals move on).
type stopRule struct {
	grace, margin time.Duration
	deadline      func() time.Time
}

// termAt is when CMD must be told to stop if no renewal succeeds first.
func (r stopRule) termAt() time.Time { return r.deadline().Add(-r.margin - r.grace) }

// killAt is when CMD, told to stop at termSent, must be killed: after
// grace, or earlier if the lease would otherwise expire first.
func (r stopRule) killAt(termSent time.Time) time.Time {
	kill := termSent.Add(r.grace)
	if byLease := r.deadline().Add(-r.margin); byLease.Before(kill) {
		return byLease
	}
	return kill
}

// acquire waits for the lock until it is taken, wait passes (if not 0) or
// ctx ends. The lease lives on leaseCtx: the runtime renews a lease until
// Release or until the context given to Acquire ends, so that context is
// cancelled here only when giving up the wait; once the lock is taken it
// ends with leaseCtx. (Cancelling it on return, as a wait's context
// usually is, stopped renewal as soon as CMD started.)
func acquire(ctx, leaseCtx context.Context, l *runtime.Lock, wait time.Duration) (*runtime.Lease, error) {
	actx, giveUp := context.WithCancel(leaseCtx)
	held := false
	defer func() {
		if !held {
			giveUp()
		}
	}()
	type result struct {
		lease *runtime.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() {
		le, err := l.Acquire(actx)
		got <- result{le, err}
	}()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	var why error
	select {
	case r := <-got:
		held = r.err == nil
		return r.lease, r.err
	case <-timeout:
		why = errWaitExpired
	case <-ctx.Done():
		why = ctx.Err()
	}
	giveUp()
	if r := <-got; r.err == nil {
		// Taken just as we gave up: hand it back at once.
		_ = r.lease.Release(context.WithoutCancel(ctx))
	}
	return nil, why
}

var errWaitExpired = errors.New("lock is held by someone else (--wait expired)")

func lockError(subject string, err error) error {
	if errors.Is(err, errWaitExpired) {
		return &exitError{code: exitNegative, err: fmt.Errorf("%s: %w", subject, err)}
	}
	if errors.Is(err, context.Canceled) {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: interrupted while waiting for the lock", subject)}
	}
	return opError(subject, err)
}

// stopGroup asks CMD's process group to end (SIGTERM) and kills what is
// left of it (SIGKILL) when rule says, after --grace or sooner if the lease
// would expire first. exited delivers CMD's Wait result, or is nil when CMD
// has been waited for already. It returns that result once CMD has exited
// and its group is empty; after a SIGKILL it waits at most killWait for the
// group to empty, since an init that does not reap orphans can leave
// zombies in it for good.
func stopGroup(cmd *exec.Cmd, exited <-chan error, rule stopRule) error {
	termSent := time.Now()
	_ = signalGroup(cmd, syscall.SIGTERM)
	var result error
	poll := time.NewTicker(groupPoll)
	defer poll.Stop()
	for {
		select {
		case result = <-exited:
			exited = nil
		case <-poll.C:
		}
		if exited == nil && !groupAlive(cmd) {
			return result
		}
		if time.Now().Before(rule.killAt(termSent)) {
			continue
		}
		_ = signalGroup(cmd, syscall.SIGKILL)
		if exited != nil {
			result = <-exited
		}
		for end := time.Now().Add(killWait); groupAlive(cmd) && time.Now().Before(end); {
			<-poll.C
		}
		return result
	}
}

const (
	groupPoll = 10 * time.Millisecond // how often stopGroup looks whether the group is empty
	killWait  = time.Second           // how long it waits for the group to empty after SIGKILL
)

// commandExit turns the command's end into ssgen's exit code: the
// command's own code, or 128+N for a signal N, shell style. err is what
// Wait returned; a command that exited well but whose output pipes stayed
// open past --grace (held by what it left running) still succeeded.
func commandExit(cmd *exec.Cmd, err error) error {
	ps := cmd.ProcessState
	var ee *exec.ExitError
	switch {
	case ps == nil || err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay):
		if err == nil {
			return nil
		}
		return &exitError{code: exitUsage, err: err}
	case ps.Success():
		return nil
	}
	code := ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	// The command spoke for itself on stderr; add nothing.
	return &exitError{code: code, err: errors.New("")}
}
