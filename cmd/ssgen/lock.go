package main

import (
	"context"
	"errors"
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
	"(128+N if a signal N ended it). If the lease is lost, CMD gets SIGTERM, then\n" +
	"SIGKILL after --grace, and ssgen exits 1; also exit 1 if --wait passes first.\n" +
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
	grace := fs.Duration("grace", 5*time.Second, "time between SIGTERM and SIGKILL when CMD must stop")
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
	if *wait < 0 || *grace < 0 {
		return usageErrorf("--wait and --grace must not be negative")
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
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), cf.timeout)
		defer cancel()
		if err := lease.Release(rctx); err != nil {
			fmt.Fprintf(env.stderr, "ssgen lock: %s: release: %s (the lock expires by itself after --ttl)\n", subject, libText(err))
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

	var lost bool
	select {
	case err = <-exited:
		restoreTerminal()
		if groupAlive(cmd) {
			// Work CMD left behind would run on without the lease.
			fmt.Fprintf(env.stderr, "ssgen lock: %s: %s exited; stopping what it left running in its process group\n", subject, command[0])
			stopGroup(cmd, nil, *grace)
		}
	case <-lease.Lost():
		lost = true
		err = stopGroup(cmd, exited, *grace)
	case <-ctx.Done():
		err = stopGroup(cmd, exited, *grace)
	}
	restoreTerminal()
	if lost {
		return &exitError{code: exitNegative, err: fmt.Errorf("%s: %s; stopped %s", subject, libText(lease.Err()), command[0])}
	}
	return commandExit(cmd, err)
}

// acquire waits for the lock until it is taken, wait passes (if not 0) or
// ctx ends. The lease itself lives on leaseCtx.
func acquire(ctx, leaseCtx context.Context, l *runtime.Lock, wait time.Duration) (*runtime.Lease, error) {
	actx, cancel := context.WithCancel(leaseCtx)
	defer cancel()
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
		return r.lease, r.err
	case <-timeout:
		why = errWaitExpired
	case <-ctx.Done():
		why = ctx.Err()
	}
	cancel()
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
// left of it after grace (SIGKILL). exited delivers CMD's Wait result, or is
// nil when CMD has been waited for already. It returns that result once CMD
// has exited and its group is empty; after a SIGKILL it waits at most
// killWait for the group to empty, since an init that does not reap orphans
// can leave zombies in it for good.
func stopGroup(cmd *exec.Cmd, exited <-chan error, grace time.Duration) error {
	_ = signalGroup(cmd, syscall.SIGTERM)
	var result error
	kill := time.NewTimer(grace)
	defer kill.Stop()
	poll := time.NewTicker(groupPoll)
	defer poll.Stop()
	for {
		select {
		case result = <-exited:
			exited = nil
		case <-poll.C:
		case <-kill.C:
			_ = signalGroup(cmd, syscall.SIGKILL)
			if exited != nil {
				result = <-exited
			}
			for end := time.Now().Add(killWait); groupAlive(cmd) && time.Now().Before(end); {
				<-poll.C
			}
			return result
		}
		if exited == nil && !groupAlive(cmd) {
			return result
		}
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
