package runtime_test

import (
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
)

type renamedDoc struct {
	Celsius float64 `msgpack:"celsius"`
}

// A value stored under a field's earlier name decodes to what the caller
// passes as old, so CompareAndSet swaps it, though its bytes differ from
// old's encoding.
func TestCompareAndSetMatchesAValueStoredInAnEarlierForm(t *testing.T) {
	forEachEnv(t, func(t *testing.T, env *testEnv) {
		c := dial(t, env.url)
		ctx := testCtx(t)
		ev := &codec.Evolution{Structs: map[string]codec.StructEvolution{
			"Doc": {Fields: []codec.FieldEvolution{{Name: "celsius", RenamedFrom: []string{"temp"}}}},
		}}
		lock := runtime.NewLock(c, []byte("evolved/lock"), time.Second)
		cdc := codec.Evolved[renamedDoc]{Codec: codec.MsgPack[renamedDoc]{}, Evolution: ev, Type: "Doc"}
		k := runtime.NewKey[renamedDoc](c, []byte("evolved"), cdc, runtime.GuardedBy(lock))

		old, err := msgpack.Marshal(map[string]float64{"temp": 20})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set(ctx, []byte("evolved"), old, runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if ok, err := k.CompareAndSet(ctx, renamedDoc{Celsius: 19}, renamedDoc{Celsius: 0}); ok || err != nil {
			t.Fatalf("CAS with another value: %v, %v; want false, nil", ok, err)
		}
		if ok, err := k.CompareAndSet(ctx, renamedDoc{Celsius: 20}, renamedDoc{Celsius: 21}); !ok || err != nil {
			t.Fatalf("CAS with the value stored in an earlier form: %v, %v; want true, nil", ok, err)
		}
		if e, err := k.Get(ctx); err != nil || e.Value.Celsius != 21 {
			t.Fatalf("after CAS: %+v, %v", e.Value, err)
		}
	})
}
