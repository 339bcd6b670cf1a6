package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// step is one request of a sequence and the exact answer it must get.
type step struct {
	req     request
	payload string
	ts      bool // the response carries __ts
}

func set(args ...string) request { return request{payload: cmd(append([]string{"SET"}, args...)...)} }
func raw(s string) request       { return request{payload: []byte(s)} }

// The rows of docs/wire-protocol.md#requests and #responses, each a sequence on fresh keys.
func TestResponsesMatchTheWireContract(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
	}{
		{"SET stores", []step{{set("k", "v"), "+OK\r\n", true}}},
		{"SET of an empty value stores it", []step{
			{raw("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"), "+OK\r\n", true},
			{raw("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), "$0\r\n\r\n", true},
		}},
		{"SET NX on an absent key stores (Go SDK bytes)", []step{
			{raw("*4\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n$2\r\nNX\r\n"), "+OK\r\n", true},
		}},
		{"SET NX on a present key fails with :-1 and __ts", []step{
			{set("k", "v"), "+OK\r\n", true},
			{set("k", "w", "NX"), ":-1\r\n", true},
			{raw("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), "$1\r\nv\r\n", true},
		}},
		{"SET NEX PX on an absent key stores (Go SDK bytes)", []step{
			{raw("*6\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n$3\r\nNEX\r\n$2\r\nPX\r\n$5\r\n10000\r\n"), "+OK\r\n", true},
		}},
		{"SET NEX with the same value renews", []step{
			{set("k", "v", "NEX"), "+OK\r\n", true},
			{set("k", "v", "NEX"), "+OK\r\n", true},
		}},
		{"SET NEX with another value fails", []step{
			{set("k", "v", "NEX"), "+OK\r\n", true},
			{set("k", "w", "NEX"), ":-1\r\n", true},
		}},
		{"GET hit (Go SDK bytes)", []step{
			{set("k1", "hello"), "+OK\r\n", true},
			{raw("*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"), "$5\r\nhello\r\n", true},
		}},
		{"GET miss has no __ts", []step{{raw("*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"), "$-1\r\n", false}}},
		{"DEL of a present key", []step{
			{set("k", "v"), "+OK\r\n", true},
			{request{payload: cmd("DEL", "k")}, ":1\r\n", true},
			{request{payload: cmd("GET", "k")}, "$-1\r\n", false},
		}},
		{"DEL of an absent key", []step{{request{payload: cmd("DEL", "k")}, ":0\r\n", true}}},
		{"VDEL with the value deletes", []step{
			{set("k1", "zz"), "+OK\r\n", true},
			{raw("*3\r\n$4\r\nVDEL\r\n$2\r\nk1\r\n$2\r\nzz\r\n"), ":1\r\n", true},
		}},
		{"VDEL of an absent key", []step{{raw("*3\r\n$4\r\nVDEL\r\n$2\r\nk1\r\n$2\r\nzz\r\n"), ":0\r\n", true}}},
		{"VDEL with another value fails", []step{
			{set("k1", "aa"), "+OK\r\n", true},
			{raw("*3\r\n$4\r\nVDEL\r\n$2\r\nk1\r\n$2\r\nzz\r\n"), ":-1\r\n", true},
			{request{payload: cmd("GET", "k1")}, "$2\r\naa\r\n", true},
		}},
		{"KEYNOTIFY registers", []step{{request{payload: cmd("KEYNOTIFY", "k")}, "+OK\r\n", true}}},
		{"KEYNOTIFY STOP removes (Go SDK bytes)", []step{
			{request{payload: cmd("KEYNOTIFY", "SOMEKEY")}, "+OK\r\n", true},
			{raw("*3\r\n$9\r\nKEYNOTIFY\r\n$7\r\nSOMEKEY\r\n$4\r\nSTOP\r\n"), "+OK\r\n", true},
		}},
		{"KEYNOTIFY STOP without registration", []step{
			{raw("*3\r\n$9\r\nKEYNOTIFY\r\n$7\r\nSOMEKEY\r\n$4\r\nSTOP\r\n"), ":0\r\n", true},
		}},
		{"SET without __ts", []step{{request{payload: cmd("SET", "k", "v"), noTS: true}, "-ERR missing timestamp\r\n", false}}},
		{"malformed __ts", []step{{request{payload: cmd("SET", "k", "v"), ts: "yesterday"}, "-ERR malformed timestamp\r\n", false}}},
		{"malformed __ft", []step{{request{payload: cmd("SET", "k", "v"), ft: "1:2"}, "-ERR malformed timestamp\r\n", false}}},
		{"unknown command", []step{{request{payload: cmd("INCR", "k")}, "-ERR unknown command\r\n", false}}},
		{"lower-case verb is unknown", []step{{request{payload: cmd("get", "k")}, "-ERR unknown command\r\n", false}}},
		{"wrong number of arguments", []step{{request{payload: cmd("GET")}, "-ERR wrong number of arguments\r\n", false}}},
		{"empty key", []step{{request{payload: cmd("SET", "", "v")}, "-ERR the key length is zero\r\n", false}}},
		{"undecodable payload", []step{{raw("*2\r\n$3\r\nGET\r\n$9\r\nk\r\n"), "-ERR syntax error\r\n", false}}},
		{"empty payload", []step{{raw(""), "-ERR syntax error\r\n", false}}},
		{"unknown SET option", []step{{set("k", "v", "XX"), "-ERR syntax error\r\n", false}}},
	}
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("conformance")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c.t = t
				for _, k := range []string{"k", "k1", "SOMEKEY"} {
					e.srv.Engine().Delete([]byte(k))
				}
				var setTS string
				for i, s := range tc.steps {
					p := c.roundTrip(s.req)
					ts := checkResponse(t, p, s.payload, s.ts)
					// A GET returns the version of the SET that stored the value.
					if i > 0 && s.payload[0] == '$' && s.ts && setTS != "" && ts != setTS {
						t.Errorf("GET __ts %s, want the SET's %s", ts, setTS)
					}
					if s.payload == "+OK\r\n" && strings.HasPrefix(string(s.req.payload), "*3\r\n$3\r\nSET") || strings.Contains(string(s.req.payload), "$3\r\nSET\r\n") && s.payload == "+OK\r\n" {
						setTS = ts
					}
				}
			})
		}
	})
}

func TestQuotaExceeded(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("quota")
		checkResponse(t, c.do("SET", "a", "1"), "+OK\r\n", true)
		checkResponse(t, c.do("SET", "b", "2"), "-ERR the quota has been exceeded\r\n", false)
		checkResponse(t, c.do("GET", "b"), "$-1\r\n", false)
	}, func(o *server.Options) { o.MaxKeys = 1 })
}

func TestByteQuotaExceeded(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("quota")
		checkResponse(t, c.do("SET", "a", "123456789"), "+OK\r\n", true)
		checkResponse(t, c.do("SET", "b", "123456789"), "-ERR the quota has been exceeded\r\n", false)
		checkResponse(t, c.do("SET", "a", "12345678901234567890"), "-ERR the quota has been exceeded\r\n", false)
		checkResponse(t, c.do("GET", "a"), "$9\r\n123456789\r\n", true)
	}, func(o *server.Options) { o.MaxBytes = 16 })
}

// docs/wire-protocol.md#versions-and-the-clock: drift and the versions the service assigns.
func TestTimestampsAndSkew(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c := e.connect("skew")
		t.Run("__ts too far ahead", func(t *testing.T) {
			c.t = t
			p := c.roundTrip(request{payload: cmd("SET", "k", "v"), ts: e.stamp(2 * time.Minute)})
			checkResponse(t, p, "-ERR "+string(engine.ErrTimestampSkew)+"\r\n", false)
		})
		t.Run("__ft too far ahead", func(t *testing.T) {
			c.t = t
			p := c.roundTrip(request{payload: cmd("SET", "k", "v"), ft: e.stamp(2 * time.Minute)})
			checkResponse(t, p, "-ERR "+string(engine.ErrFencingTokenSkew)+"\r\n", false)
		})
		t.Run("__ts behind is fine and the version is after it", func(t *testing.T) {
			c.t = t
			reqTS := e.stamp(-time.Hour)
			ts := checkResponse(t, c.roundTrip(request{payload: cmd("SET", "k", "v"), ts: reqTS}), "+OK\r\n", true)
			v, _ := hlc.Parse(ts)
			r, _ := hlc.Parse(reqTS)
			if v.Compare(r) <= 0 {
				t.Errorf("version %s not after request __ts %s", ts, reqTS)
			}
			if d := v.Time().Sub(e.clock.Now()); d > time.Minute || d < -time.Minute {
				t.Errorf("version %s is %v from the service clock", ts, d)
			}
		})
		t.Run("unpadded __ts is accepted", func(t *testing.T) {
			c.t = t
			ts := strings.TrimLeft(e.stamp(0), "0")
			checkResponse(t, c.roundTrip(request{payload: cmd("SET", "k", "v"), ts: ts}), "+OK\r\n", true)
		})
	})
}

// The lock-and-fence walk-through of the protocol article, with the
// protocol's messages.
func TestLockAndFence(t *testing.T) {
	eachTransport(t, func(t *testing.T, e *env) {
		c1, c2 := e.connect("Client1"), e.connect("Client2")
		t1 := checkResponse(t, c1.do("SET", "lock", "Client1", "NEX", "PX", "10000"), "+OK\r\n", true)
		checkResponse(t, c1.roundTrip(request{payload: cmd("SET", "protected", "v1"), ft: t1}), "+OK\r\n", true)
		checkResponse(t, c2.do("SET", "lock", "Client2", "NEX", "PX", "10000"), ":-1\r\n", true)
		checkResponse(t, c2.do("SET", "protected", "x"), "-ERR a fencing token is required for this request\r\n", false)

		// Client1 stalls past its lease; Client2 takes the lock.
		e.clock.Advance(11 * time.Second)
		e.srv.Engine().Expire()
		t2 := checkResponse(t, c2.do("SET", "lock", "Client2", "NEX", "PX", "10000"), "+OK\r\n", true)
		checkResponse(t, c2.roundTrip(request{payload: cmd("SET", "protected", "v2"), ft: t2}), "+OK\r\n", true)

		// Client1 wakes up and writes with its stale token.
		checkResponse(t, c1.roundTrip(request{payload: cmd("SET", "protected", "v3"), ft: t1}),
			"-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n", false)
		checkResponse(t, c1.roundTrip(request{payload: cmd("DEL", "protected"), ft: t1}),
			"-ERR the request fencing token is a lower version than the fencing token protecting the resource\r\n", false)
		checkResponse(t, c1.do("VDEL", "protected", "v2"), "-ERR a fencing token is required for this request\r\n", false)
		checkResponse(t, c1.do("GET", "protected"), "$2\r\nv2\r\n", true)

		// Client2 releases; the fenced key is deleted with its token.
		checkResponse(t, c2.do("VDEL", "lock", "Client2"), ":1\r\n", true)
		checkResponse(t, c2.roundTrip(request{payload: cmd("DEL", "protected"), ft: t2}), ":1\r\n", true)
		checkResponse(t, c1.do("SET", "protected", "free"), "+OK\r\n", true)
	})
}
