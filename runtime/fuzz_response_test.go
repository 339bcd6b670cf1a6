package runtime_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
)

// fuzzNow fixes the client's clock, so a crasher replays the same way.
var fuzzNow = time.UnixMilli(1_795_310_997_834)

func fuzzClock() time.Time { return fuzzNow }

// fuzzUser turns one fuzzed string into user properties, one per line,
// split at the first '='.
func fuzzUser(s string) paho.UserProperties {
	if s == "" {
		return nil
	}
	var u paho.UserProperties
	for _, line := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(line, "=")
		u = append(u, paho.UserProperty{Key: k, Value: v})
	}
	return u
}

func fuzzTS() string { return hlc.HLC{Wall: uint64(fuzzNow.UnixMilli()), Node: "StateStore"}.String() }

// FuzzDecodeResponse feeds arbitrary response envelopes and payloads to
// the runtime's response decoder. It must not panic, and every failure
// must be one of the typed errors a caller can act on: a protocol
// violation, an RPC status, a state store -ERR, or a clock refusal.
func FuzzDecodeResponse(f *testing.F) {
	ok := "__stat=200\n__ts=" + fuzzTS() + "\n__protVer=1.0"
	for _, p := range []string{"+OK\r\n", ":-1\r\n", ":1\r\n", ":0\r\n", "$5\r\nhello\r\n", "$-1\r\n", "$0\r\n\r\n",
		"-ERR syntax error\r\n", "-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n",
		"-ERR something new\r\n", "*1\r\n*1\r\n$1\r\nk\r\n", "", "+OK", "$2147483647\r\n", "*2147483647\r\n"} {
		f.Add(p, ok)
		f.Add(p, "__stat=200\n__protVer=1.0")
	}
	f.Add("-ERR unsupported\r\n", "__stat=505\n__stMsg=unsupported version\n__supProtMajVer=1")
	f.Add("-ERR x\r\n", "__stat=400\n__propName=__srcId\n__propVal=")
	f.Add("+OK\r\n", "")
	f.Add("+OK\r\n", "__stat=abc")
	f.Add("+OK\r\n", "__stat=200\n__ts=garbage")
	f.Add("+OK\r\n", "__stat=200\n__ts=999999999999999:0:far")
	c := runtime.NewUnconnectedClient("fuzz", fuzzClock)
	f.Fuzz(func(t *testing.T, payload, props string) {
		p := &paho.Publish{Payload: []byte(payload), Properties: &paho.PublishProperties{User: fuzzUser(props)}}
		v, ver, err := c.DecodeResponse("SET", p)
		if err == nil {
			if v.Kind == resp3.KindError {
				t.Fatalf("-ERR payload %q decoded without an error", payload)
			}
			// decode keeps the last __ts; it parsed, so it is the version
			last, seen := "", false
			for _, u := range fuzzUser(props) {
				if u.Key == "__ts" {
					last, seen = u.Value, true
				}
			}
			if h, perr := hlc.Parse(last); seen && perr == nil && h != ver {
				t.Fatalf("version %v, response __ts %q", ver, last)
			}
			if v.Kind == resp3.KindSimple && string(v.Str) == "OK" && ver.Wall == 0 {
				t.Fatalf("a stored SET decoded with version %v (response __ts %q, present %v)", ver, last, seen)
			}
			return
		}
		var rpc *runtime.RPCError
		var svc *runtime.ServiceError
		switch {
		case errors.Is(err, runtime.ErrProtocol):
		case errors.As(err, &rpc):
		case errors.As(err, &svc):
			if !strings.HasPrefix(payload, "-") {
				t.Fatalf("ServiceError from a non-error payload %q", payload)
			}
		case errors.Is(err, hlc.ErrDrift), errors.Is(err, hlc.ErrCounterOverflow):
		default:
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if runtime.IsRetryable(err) {
			t.Fatalf("a malformed response is not retryable: %v", err)
		}
	})
}

// FuzzNotification feeds arbitrary PUBLISHes on the client's notification
// topics to the dispatcher. It must not panic or block, and a watcher sees
// an event only for a payload that parses as a notification of its own
// key, with a valid __ts: a Set carrying the notified value, or a Delete.
func FuzzNotification(f *testing.F) {
	ts := fuzzTS()
	keyHex := "6B"
	for _, p := range []string{
		string(resp3.AppendNotifySet(nil, []byte("v"))),
		string(resp3.AppendNotifyDelete(nil)),
		"*2\r\n$6\r\nNOTIFY\r\n$3\r\nDEL\r\n",
		"*4\r\n$6\r\nNOTIFY\r\n$3\r\nSET\r\n$5\r\nVALUE\r\n$9\r\nv\r\n",
		"", "*1\r\n", "+OK\r\n",
	} {
		f.Add(keyHex, p, "__ts="+ts)
		f.Add(keyHex, p, "")
		f.Add("6b", p, "__ts="+ts)
		f.Add("ZZ", p, "__ts=bad")
		f.Add("", p, "__ts="+ts)
	}
	c := runtime.NewUnconnectedClient("fuzz", fuzzClock)
	watched := c.JoinWatcher("k", 1)
	prefix := runtime.NotifyTopicPrefix("fuzz")
	f.Fuzz(func(t *testing.T, keyHex, payload, props string) {
		p := &paho.Publish{
			QoS: 1, Topic: prefix + keyHex, Payload: []byte(payload),
			Properties: &paho.PublishProperties{User: fuzzUser(props)},
		}
		if !c.Receive(p) {
			t.Fatalf("a PUBLISH on the notification topic %q was not claimed", p.Topic)
		}
		select {
		case ev := <-watched:
			n, err := resp3.ParseNotification([]byte(payload))
			if err != nil {
				t.Fatalf("event %+v from an unparsable payload %q", ev, payload)
			}
			if ev.Version.Wall == 0 {
				t.Fatalf("event %+v delivered without a version (properties %q)", ev, props)
			}
			if string(ev.Key) != "k" {
				t.Fatalf("event for key %q reached the watcher of k", ev.Key)
			}
			switch ev.Kind {
			case runtime.EventSet:
				if n.Op != resp3.OpSet || !ev.Found || !bytes.Equal(ev.Value, n.Value) {
					t.Fatalf("Set event %+v from %q", ev, payload)
				}
			case runtime.EventDelete:
				if n.Op != resp3.OpDelete || ev.Found {
					t.Fatalf("Delete event %+v from %q", ev, payload)
				}
			default:
				t.Fatalf("event kind %v from a notification", ev.Kind)
			}
		default:
		}
	})
}
