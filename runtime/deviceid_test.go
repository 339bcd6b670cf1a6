package runtime_test

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/runtime"
)

// Device-style client ids in upper-case hex whose decoding no client can
// connect with are plain levels: the runtime answers under the id itself
// (the Rust SDK's layout), and GET, SET and watches work on both backends.
func TestDeviceStyleClientIDsAnswerUnderTheirPlainID(t *testing.T) {
	for _, id := range []string{"A4C138F0E1D2", "00124B001CAF8E21"} {
		if rt := runtime.ResponseTopic(id); !strings.HasPrefix(rt, "clients/"+id+"/services/statestore/") {
			t.Fatalf("ResponseTopic(%q) = %q, want it under the plain id", id, rt)
		}
		t.Run(id, func(t *testing.T) {
			forEachEnv(t, func(t *testing.T, env *testEnv) {
				cfg := testConfig(t, env.url)
				cfg.ClientID = id
				c := dialConfig(t, cfg)
				ctx := testCtx(t)
				w := coreWatch(t, c, "device/k", nil)
				coreSync(t, c, "device/k", w)
				ver, err := c.Set(ctx, []byte("device/k"), []byte("on"), runtime.SetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if ev := w.next(t); ev.Kind != runtime.EventSet || string(ev.Value) != "on" || ev.Version != ver {
					t.Fatalf("after Set: %+v, want Set on at %v", ev, ver)
				}
				if v, got, err := c.Get(ctx, []byte("device/k")); err != nil || string(v) != "on" || got != ver {
					t.Fatalf("Get = %q, %v, %v; want on at %v", v, got, err, ver)
				}
			})
		})
	}
}
