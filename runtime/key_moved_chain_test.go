package runtime_test

import (
	"errors"
	"testing"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

// A key that moved twice (renamed_from: [tempk2, tempk], issue #27)
// reads through each earlier name in order, and its writes and deletes
// clear them all.
func TestKeyMovedTwiceReadsAndClearsEveryEarlierName(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		k := runtime.NewKey[string](c, []byte("chain/tempk3"), codec.String[string]{}, runtime.MovedFrom([]byte("chain/tempk2"), []byte("chain/tempk")))
		if got := k.EarlierNames(); len(got) != 2 || got[0] != "chain/tempk2" || k.MovedFrom() != "chain/tempk2" {
			t.Fatalf("EarlierNames %v, MovedFrom %q", got, k.MovedFrom())
		}
		put := func(key, v string) {
			t.Helper()
			if _, err := c.Set(ctx, []byte(key), []byte(v), runtime.SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		absent := func(key string) {
			t.Helper()
			if _, _, err := c.Get(ctx, []byte(key)); !errors.Is(err, runtime.ErrNotFound) {
				t.Fatalf("%s: %v, want ErrNotFound", key, err)
			}
		}
		put("chain/tempk", "v1")
		if e, err := k.Get(ctx); err != nil || e.Value != "v1" {
			t.Fatalf("Get through the oldest name: %v, %v", e, err)
		}
		put("chain/tempk2", "v2")
		if e, err := k.Get(ctx); err != nil || e.Value != "v2" {
			t.Fatalf("Get through the latest earlier name first: %v, %v", e, err)
		}
		if ok, _, err := k.SetIfAbsent(ctx, "x"); ok || err != nil {
			t.Fatalf("SetIfAbsent with earlier values: %v, %v", ok, err)
		}
		if _, err := k.Set(ctx, "v3"); err != nil {
			t.Fatal(err)
		}
		absent("chain/tempk2")
		absent("chain/tempk")
		put("chain/tempk", "v1")
		if ok, err := k.Delete(ctx); !ok || err != nil {
			t.Fatalf("Delete: %v, %v", ok, err)
		}
		absent("chain/tempk3")
		absent("chain/tempk")
	})
}
