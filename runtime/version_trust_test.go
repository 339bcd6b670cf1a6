package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// coreTSCounter makes the versions coreNowTS hands out increase within one
// millisecond, as a real service's do (a Watch skips a notification not
// newer than the version its last Resync read).
var coreTSCounter atomic.Uint64

// coreNowTS is a valid __ts at the current time, newer than the last one.
func coreNowTS() string {
	return hlc.HLC{Wall: uint64(time.Now().UnixMilli()), Counter: coreTSCounter.Add(1), Node: "svc"}.String()
}

// A reply whose outcome hands the caller a version must carry a valid
// __ts; the runtime refuses one without (never a zero version, which a
// lease would take as its fencing token and then fence nothing). Replies
// that hand back no version are accepted without one.
func TestRepliesMustCarryTheVersionTheyHandBack(t *testing.T) {
	url := brokertest.Mosquitto(t)
	// The responder answers by key: payload, then user properties after
	// __stat=200.
	replies := map[string][]string{
		"set-none":    {"+OK\r\n"},
		"set-zero":    {"+OK\r\n", "__ts", "0:0:svc"},
		"set-bad":     {"+OK\r\n", "__ts", "nope"},
		"set-cond":    {":-1\r\n"},
		"get-hit":     {"$1\r\nv\r\n"},
		"get-miss":    {"$-1\r\n"},
		"del-one":     {":1\r\n"},
		"del-zero":    {":0\r\n"},
		"vdel-one":    {":1\r\n"},
		"vdel-differ": {":-1\r\n"},
		"notify":      {"+OK\r\n"},
		"lock":        {"+OK\r\n"},
		"set-good":    {"+OK\r\n", "__ts", "@now"},
	}
	coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		r := replies[strings.Split(string(req.Payload), "\r\n")[4]]
		user := []string{"__stat", "200"}
		for i := 1; i+1 < len(r); i += 2 {
			v := r[i+1]
			if v == "@now" {
				v = coreNowTS()
			}
			user = append(user, r[i], v)
		}
		return coreReply(req, r[0], user...)
	})
	c := dial(t, url)
	ctx := testCtx(t)
	set := func(key string) error {
		_, err := c.Set(ctx, []byte(key), []byte("v"), runtime.SetOptions{})
		return err
	}
	get := func(key string) error { _, _, err := c.Get(ctx, []byte(key)); return err }
	del := func(key string) error { _, _, err := c.Del(ctx, []byte(key), runtime.DelOptions{}); return err }
	vdel := func(key string) error {
		_, _, err := c.VDel(ctx, []byte(key), []byte("v"), runtime.DelOptions{})
		return err
	}
	for _, tc := range []struct {
		name string
		call func() error
		want error // nil: success
	}{
		{"SET +OK without __ts", func() error { return set("set-none") }, runtime.ErrInvalidVersion},
		{"SET +OK with the zero clock", func() error { return set("set-zero") }, runtime.ErrInvalidVersion},
		{"SET +OK with a malformed __ts", func() error { return set("set-bad") }, hlc.ErrMalformed},
		{"SET :-1 without __ts", func() error { return set("set-cond") }, runtime.ErrConditionNotMet},
		{"GET hit without __ts", func() error { return get("get-hit") }, runtime.ErrInvalidVersion},
		{"GET miss without __ts", func() error { return get("get-miss") }, runtime.ErrNotFound},
		{"DEL :1 without __ts", func() error { return del("del-one") }, runtime.ErrInvalidVersion},
		{"DEL :0 without __ts", func() error { return del("del-zero") }, runtime.ErrInvalidVersion},
		{"VDEL :1 without __ts", func() error { return vdel("vdel-one") }, runtime.ErrInvalidVersion},
		{"VDEL :-1 without __ts", func() error { return vdel("vdel-differ") }, runtime.ErrConditionNotMet},
		{"KEYNOTIFY +OK without __ts", func() error { return c.KeyNotify(ctx, []byte("notify")) }, nil},
		{"SET +OK with a valid __ts", func() error { return set("set-good") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if errors.Is(tc.want, runtime.ErrInvalidVersion) || errors.Is(tc.want, hlc.ErrMalformed) {
				var pe *runtime.ProtocolError
				if !errors.As(err, &pe) || !errors.Is(err, runtime.ErrProtocol) || !errors.Is(err, runtime.ErrInvalidVersion) {
					t.Fatalf("err = %v, want a *ProtocolError matching ErrProtocol and ErrInvalidVersion", err)
				}
			}
		})
	}

	// A lock whose SET answer has no version is not taken: no lease with a
	// zero fencing token.
	lease, ok, err := runtime.NewLock(c, []byte("lock"), time.Second).TryAcquire(ctx)
	if lease != nil || ok || !errors.Is(err, runtime.ErrInvalidVersion) {
		t.Fatalf("TryAcquire = %v, %v, %v; want no lease and ErrInvalidVersion", lease, ok, err)
	}
}

// A notification whose __ts the client cannot trust (too far ahead,
// absent, malformed, the zero clock) is not delivered: it is counted in
// Stats().RefusedNotifications and the watchers get a Resync instead.
func TestNotificationWithARefusedVersionIsDropped(t *testing.T) {
	url := brokertest.Mosquitto(t)
	var mu sync.Mutex
	current := "first" // what a GET (a Resync) reads
	peer := coreRawResponder(t, url, func(req *paho.Publish) *paho.Publish {
		switch strings.Split(string(req.Payload), "\r\n")[2] {
		case "GET":
			mu.Lock()
			v := current
			mu.Unlock()
			return coreReply(req, "$"+string(rune('0'+len(v)))+"\r\n"+v+"\r\n", "__stat", "200", "__ts", coreNowTS())
		default: // KEYNOTIFY, KEYNOTIFY STOP
			return coreReply(req, "+OK\r\n", "__stat", "200", "__ts", coreNowTS())
		}
	})
	c := dial(t, url)
	w := coreWatch(t, c, "k", nil)
	topic := runtime.NotifyTopic(c.ClientID(), []byte("k"))
	notify := func(value string, user ...string) {
		t.Helper()
		payload := "*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$" + string(rune('0'+len(value))) + "\r\n" + value + "\r\n"
		props := &paho.PublishProperties{}
		for i := 0; i+1 < len(user); i += 2 {
			props.User = append(props.User, paho.UserProperty{Key: user[i], Value: user[i+1]})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := peer.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: topic, Payload: []byte(payload), Properties: props}); err != nil {
			t.Fatal(err)
		}
	}
	// The registration is live once a valid notification comes through.
	awaitValue := func(value string) {
		t.Helper()
		for {
			ev := w.next(t)
			if strings.HasPrefix(string(ev.Value), "bad") {
				t.Fatalf("a refused notification was delivered: %+v", ev)
			}
			if string(ev.Value) == value {
				return
			}
		}
	}
	waitFor(t, "a notification to come through", func() bool {
		notify("first", "__ts", coreNowTS())
		select {
		case ev := <-w.events:
			return ev.Kind == runtime.EventSet && string(ev.Value) == "first"
		case err := <-w.errs:
			t.Fatalf("watch: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		return false
	})
	before := c.Stats()
	future := hlc.HLC{Wall: uint64(time.Now().Add(5 * time.Minute).UnixMilli()), Node: "svc"}.String()
	notify("bad1", "__ts", future)
	notify("bad2")
	notify("bad3", "__ts", "nope")
	notify("bad4", "__ts", "0:0:svc")
	waitFor(t, "four refused notifications", func() bool {
		return c.Stats().RefusedNotifications-before.RefusedNotifications == 4
	})
	if c.Clock().Last().Wall >= uint64(time.Now().Add(time.Minute).UnixMilli()) {
		t.Fatalf("a refused __ts was merged into the clock: %v", c.Clock().Last())
	}
	// The watcher heard of the change through a Resync.
	for {
		if ev := w.next(t); ev.Kind == runtime.EventResync {
			break
		} else if strings.HasPrefix(string(ev.Value), "bad") {
			t.Fatalf("a refused notification was delivered: %+v", ev)
		}
	}
	// A valid notification still comes through afterwards (as itself, or
	// through a Resync that read it).
	mu.Lock()
	current = "last"
	mu.Unlock()
	notify("last", "__ts", coreNowTS())
	awaitValue("last")
	if s := c.Stats(); s.Notifications-before.Notifications != 5 || s.RefusedNotifications-before.RefusedNotifications != 4 {
		t.Fatalf("Notifications +%d, RefusedNotifications +%d; want +5, +4",
			s.Notifications-before.Notifications, s.RefusedNotifications-before.RefusedNotifications)
	}
}
