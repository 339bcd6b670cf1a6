package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/internal/testkit/clienttest"
	"github.com/ssgen/ssgen/internal/testkit/etcdtest"
	"github.com/ssgen/ssgen/internal/testkit/testwait"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/servertest"
)

func TestServeStoreEtcdUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--store", "etcd://127.0.0.1:2379"}, "--store etcd:// needs --broker"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--data-dir", t.TempDir()}, "--store etcd:// excludes --data-dir"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--ui"}, "--store etcd:// excludes --ui"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "http://127.0.0.1:2379"}, "want etcd://HOST:PORT"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1"}, "want HOST:PORT"},
		{[]string{"serve", "--etcd-prefix", "/x/"}, "--etcd-prefix needs --store"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-cert-file", "c.pem"}, "--etcd-cert-file and --etcd-key-file go together"},
		{[]string{"serve", "--broker", "127.0.0.1:1883", "--store", "etcd://127.0.0.1:2379", "--etcd-password-file", "p"}, "--etcd-password-file needs --etcd-user"},
	} {
		r := runIn(t, "", nil, tc.args...)
		r.want(t, exitUsage, nil)
		if !strings.Contains(r.stderr, tc.want) {
			t.Fatalf("%v: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
}

// etcdChild is `ssgen serve --store etcd://` in a child process.
type etcdChild struct {
	cmd *exec.Cmd
	log *syncBuffer
}

func startEtcdChild(t *testing.T, args ...string) *etcdChild {
	t.Helper()
	args = append([]string{"serve", "--log-level", "info"}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeChildProcess$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\x1f"))
	c := &etcdChild{cmd: cmd, log: &syncBuffer{}}
	cmd.Stderr = multiWriter{servertest.LogWriter(t), c.log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	return c
}

type multiWriter []interface{ Write([]byte) (int, error) }

func (m multiWriter) Write(p []byte) (int, error) {
	for _, w := range m {
		_, _ = w.Write(p)
	}
	return len(p), nil
}

func (c *etcdChild) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

func (c *etcdChild) waitLog(t *testing.T, what string) {
	t.Helper()
	testwait.Until(t, 60*time.Second, "a child logging "+what, func() bool { return strings.Contains(c.log.String(), what) })
}

// Two `ssgen serve --store etcd://` processes on one broker: the leader
// gets kill -9; the standby takes over with every acknowledged write, its
// version and fencing token, and the KEYNOTIFY registration made on the
// dead leader.
func TestServeStoreEtcdSurvivesKill9OfTheLeader(t *testing.T) {
	c := etcdtest.Start(t, 3)
	b := brokertest.Start(t)
	args := []string{"--broker", b.URL(), "--store", c.URL(), "--etcd-prefix", "/kill9/"}
	leader := startEtcdChild(t, args...)
	leader.waitLog(t, "state store leader")
	standby := startEtcdChild(t, args...)
	standby.waitLog(t, "state store standby")

	ctx := clienttest.Context(t)
	watcher := clienttest.Dial(t, b.URL())
	if err := watcher.KeyNotify(ctx, []byte("watched")); err != nil {
		t.Fatal(err)
	}
	events := make(chan runtime.Event, 16)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	started := make(chan struct{})
	go func() {
		for ev, err := range watcher.WatchWith(wctx, []byte("watched"), runtime.WatchOptions{Current: true}) {
			switch {
			case err != nil:
			case ev.Kind == runtime.EventResync:
				close(started)
			default:
				events <- ev
			}
		}
	}()
	<-started

	cl := clienttest.Dial(t, b.URL())
	fence := hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Node: "locker"}
	acked := map[string]hlc.HLC{}
	var top hlc.HLC
	for i := range 16 {
		key := "key" + string(rune('a'+i))
		v, err := cl.Set(ctx, []byte(key), []byte("v-"+key), runtime.SetOptions{FencingToken: fence})
		if err != nil {
			t.Fatal(err)
		}
		acked[key], top = v, v
	}
	if strings.Contains(standby.log.String(), "state store leader") {
		t.Fatal("the standby leads while the leader lives")
	}

	killed := time.Now()
	leader.kill()
	standby.waitLog(t, "state store leader")
	t.Logf("failover: the standby leads %v after the kill (informational)", time.Since(killed).Round(time.Millisecond))
	for key, v := range acked {
		got, gv, err := cl.Get(ctx, []byte(key))
		if err != nil || string(got) != "v-"+key || gv != v {
			t.Fatalf("GET %s after kill -9 = %q %v %v, want version %v", key, got, gv, err, v)
		}
	}
	older := fence
	older.Wall--
	if _, err := cl.Set(ctx, []byte("keya"), []byte("x"), runtime.SetOptions{FencingToken: older}); err == nil {
		t.Fatal("SET with an older fencing token accepted after the failover")
	}
	v, err := cl.Set(ctx, []byte("watched"), []byte("after"), runtime.SetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Compare(top) <= 0 {
		t.Fatalf("version after the failover %v not after %v", v, top)
	}
	select {
	case ev := <-events:
		if string(ev.Value) != "after" {
			t.Fatalf("watcher got %+v, want the SET after the failover", ev)
		}
	case <-ctx.Done():
		t.Fatal("the registration made on the killed leader did not notify after the failover")
	}
}
