package server

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/runtime/resp3"
	"github.com/ssgen/ssgen/server/engine"
)

// fuzzProps turns one fuzzed string into user properties: one per line,
// key and value split at the first '='. Any string is a valid input, so
// the fuzzer explores property sets without a structured decoder.
func fuzzProps(s string) []userProp {
	if s == "" {
		return nil
	}
	var props []userProp
	for _, line := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(line, "=")
		props = append(props, userProp{k, v})
	}
	return props
}

// fuzzFixedNow is the engine's clock during fuzzing, so that a seed's
// __ts is neither stale nor in the future on any run, and a crasher
// replays the same way later.
var fuzzFixedNow = time.UnixMilli(1_795_310_997_834)

// FuzzProcess drives the envelope rules and the engine with arbitrary
// envelopes and payloads. Whatever comes in, process must not panic, and
// must either drop or kick with a reason, or produce a reply the official
// clients can read: on the request's own response topic (never a retained
// request, never into another client's topics), correlation data
// echoed, __stat first, __protVer present, a non-empty payload that parses
// as one RESP3 value, and a __ts only on results that carry a version.
// Every notification the engine emits must parse as a notification.
func FuzzProcess(f *testing.F) {
	ts := hlc.HLC{Wall: uint64(fuzzFixedNow.UnixMilli()), Node: "fuzz"}.String()
	good := "__srcId=c1\n__ts=" + ts + "\n__protVer=1.0\n$partition=c1\n$high_priority="
	cmd := func(args ...string) []byte {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		return resp3.AppendCommand(nil, b...)
	}
	seeds := []struct {
		payload []byte
		props   string
	}{
		{cmd("SET", "k", "v"), good},
		{cmd("SET", "k", "v", "NX"), good},
		{cmd("SET", "k", "v", "NEX", "PX", "10000"), good},
		{cmd("SET", "k", "v"), good + "\n__ft=" + ts},
		{cmd("GET", "k"), good},
		{cmd("DEL", "k"), good + "\n__ft=" + ts},
		{cmd("VDEL", "k", "v"), good},
		{cmd("KEYNOTIFY", "k"), good},
		{cmd("KEYNOTIFY", "k", "STOP"), good},
		{cmd("SCAN", "*"), good},
		{cmd("SET", "", "v"), good},
		{cmd("SET", "k", "v"), "__srcId=c1"},
		{cmd("SET", "k", "v"), "__srcId=c1\n__ts=not-a-clock"},
		{cmd("SET", "k", "v"), "__srcId=c1\n__ts=999999999999999:0:x"},
		{cmd("GET", "k"), "__protVer=2.0"},
		{[]byte("*2\r\n$3\r\nGET\r\n$9\r\nk\r\n"), good},
		{[]byte("*2147483647\r\n"), good},
		{nil, good},
	}
	for _, s := range seeds {
		f.Add(byte(1), false, "clients/c1/resp", []byte("0123456789abcdef"), s.props, s.payload, "")
		f.Add(byte(1), false, "clients/c1/resp", []byte("0123456789abcdef"), s.props, s.payload, "c1")
	}
	f.Add(byte(0), false, "clients/c1/resp", []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), true, "clients/c1/resp", []byte("x"), good, cmd("SET", "k", "v"), "c1")
	f.Add(byte(1), false, "", []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, RequestTopic, []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, NotifyPrefix+"/x", []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, "a/+/b", []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, "a//b", []byte("x"), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, "clients/c1/resp", []byte(nil), good, cmd("GET", "k"), "")
	f.Add(byte(1), false, "clients/6331/resp", []byte("x"), good, cmd("GET", "k"), "c1")
	f.Add(byte(1), false, "clients/c2/resp", []byte("x"), good, cmd("GET", "k"), "c1")
	f.Add(byte(1), false, "clients/6331/resp", []byte("x"), good, cmd("GET", "k"), "6331")

	// One engine for the whole run, as a server has: state left by earlier
	// inputs (fenced keys, registrations) is part of what is explored. The
	// quotas keep its memory bounded however long the fuzzer runs.
	var notifyErr error
	eng := engine.New(engine.Config{
		Now:      func() time.Time { return fuzzFixedNow },
		MaxKeys:  64,
		MaxBytes: 1 << 16,
		OnNotify: func(n engine.Notification) {
			if _, err := resp3.ParseNotification(n.Payload); err != nil && notifyErr == nil {
				notifyErr = err
			}
			if n.Version.IsZero() && notifyErr == nil {
				notifyErr = errNoNotifyVersion
			}
		},
	})

	f.Fuzz(func(t *testing.T, qos byte, retain bool, topic string, corr []byte, props string, payload []byte, client string) {
		in := &inbound{
			QoS:             qos,
			Retain:          retain,
			ResponseTopic:   topic,
			CorrelationData: corr,
			User:            fuzzProps(props),
			Payload:         payload,
			Client:          client,
		}
		out := process(eng, in)
		if notifyErr != nil {
			t.Fatalf("bad notification: %v", notifyErr)
		}
		switch out.Action {
		case actDrop, actKick:
			if out.Reason == "" {
				t.Fatalf("action %d without a reason", out.Action)
			}
			return
		case actReply:
		default:
			t.Fatalf("unknown action %d", out.Action)
		}
		r := out.Reply
		if r.Topic != topic || responseTopicProblem(r.Topic) != "" {
			t.Fatalf("reply on %q to a request asking for %q", r.Topic, topic)
		}
		if retain {
			t.Fatal("a retained request was answered")
		}
		requester := client
		if requester == "" {
			requester, _ = lookup(in.User, protocol.PropSourceID)
		}
		if requester != "" && !protocol.MayPublish(requester, r.Topic) {
			t.Fatalf("reply for %q on %q, another client's topic", requester, r.Topic)
		}
		if !bytes.Equal(r.CorrelationData, corr) {
			t.Fatalf("correlation data %x, sent %x", r.CorrelationData, corr)
		}
		if len(r.User) == 0 || r.User[0].Key != protocol.PropStatus {
			t.Fatalf("reply properties %v do not start with __stat", r.User)
		}
		if _, ok := lookup(r.User, protocol.PropProtocolVersion); !ok {
			t.Fatalf("reply properties %v lack __protVer", r.User)
		}
		if len(r.Payload) == 0 {
			t.Fatal("empty reply payload")
		}
		v, err := resp3.ParseResponse(r.Payload)
		if err != nil {
			t.Fatalf("reply payload %q does not parse: %v", r.Payload, err)
		}
		if tsv, ok := lookup(r.User, protocol.PropTimestamp); ok {
			if v.Kind == resp3.KindError || v.Kind == resp3.KindNull {
				t.Fatalf("__ts %q on a %v reply", tsv, v.Kind)
			}
			if _, err := hlc.Parse(tsv); err != nil {
				t.Fatalf("reply __ts %q: %v", tsv, err)
			}
		}
		if stat, _ := lookup(r.User, protocol.PropStatus); stat != "200" && v.Kind != resp3.KindError {
			t.Fatalf("__stat %s with a %v payload", stat, v.Kind)
		}
	})
}

var errNoNotifyVersion = errors.New("notification without a version")

// Found by FuzzProcess: the 505 answer to an unsupported __protVer puts
// the version, as sent, into its -ERR text; a CR or LF in it broke the
// RESP3 framing of the reply (and let a requester shape the payload).
func TestUnsupportedVersionReplyIsWellFormed(t *testing.T) {
	eng := engine.New(engine.Config{})
	for _, ver := range []string{"\r", "2\r\n+OK", "3\n"} {
		out := process(eng, &inbound{
			QoS: 1, ResponseTopic: "clients/c1/resp", CorrelationData: []byte("0123456789abcdef"),
			User: []userProp{{protocol.PropSourceID, "c1"}, {protocol.PropProtocolVersion, ver}}, Payload: []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"),
		})
		if v, err := resp3.ParseResponse(out.Reply.Payload); err != nil || v.Kind != resp3.KindError {
			t.Errorf("__protVer %q: reply payload %q: %v, want one -ERR value", ver, out.Reply.Payload, err)
		}
	}
}
