package codec_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ssgen/ssgen/runtime/codec"
)

// bigMap has enough entries that Go's randomized map iteration all but
// certainly visits them in different orders across encodings.
func bigMap[K comparable, V any](n int, key func(int) K, val func(int) V) map[K]V {
	m := make(map[K]V, n)
	for i := range n {
		m[key(i)] = val(i)
	}
	return m
}

// sameBytesEveryTime encodes v many times and fails if any encoding differs.
// A fresh copy of the map is built for some of the runs, because two maps
// with the same contents can also iterate differently.
func sameBytesEveryTime[T any](t *testing.T, c codec.Codec[T], mk func() T) {
	t.Helper()
	want, err := c.Encode(mk())
	if err != nil {
		t.Fatal(err)
	}
	v := mk()
	for i := range 50 {
		if i%10 == 0 {
			v = mk()
		}
		got, err := c.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encoding %d differs:\n%x\n%x", i, got, want)
		}
	}
}

func TestMsgPackEncodesEqualMapsToEqualBytes(t *testing.T) {
	itoa := func(i int) string { return fmt.Sprintf("key-%03d", i) }
	t.Run("map[string]int, which the library leaves unsorted", func(t *testing.T) {
		sameBytesEveryTime[map[string]int](t, codec.MsgPack[map[string]int]{}, func() map[string]int {
			return bigMap(64, itoa, func(i int) int { return i })
		})
	})
	t.Run("map[int]string", func(t *testing.T) {
		sameBytesEveryTime[map[int]string](t, codec.MsgPack[map[int]string]{}, func() map[int]string {
			return bigMap(64, func(i int) int { return i*7919 - 200 }, itoa)
		})
	})
	t.Run("map[string]string, sorted by the library", func(t *testing.T) {
		sameBytesEveryTime[map[string]string](t, codec.MsgPack[map[string]string]{}, func() map[string]string {
			return bigMap(64, itoa, itoa)
		})
	})
	t.Run("maps nested in structs, slices and interfaces", func(t *testing.T) {
		sameBytesEveryTime[setPoint](t, codec.MsgPack[setPoint]{}, func() setPoint {
			return setPoint{
				Labels: bigMap(32, itoa, func(i int) int { return i }),
				Zones:  bigMap(32, func(i int) int32 { return int32(i) }, itoa),
				Extra: map[string]any{
					"inner": bigMap(32, itoa, func(i int) uint { return uint(i) }),
					"list":  []any{bigMap(16, func(i int) int { return i }, itoa)},
				},
				Nested: []map[string]bool{bigMap(32, itoa, func(i int) bool { return i%2 == 0 })},
			}
		})
	})
	t.Run("map with struct values", func(t *testing.T) {
		type point struct{ X, Y map[string]int }
		sameBytesEveryTime[map[string]point](t, codec.MsgPack[map[string]point]{}, func() map[string]point {
			return bigMap(16, itoa, func(i int) point {
				return point{X: bigMap(8, itoa, func(j int) int { return j }), Y: map[string]int{}}
			})
		})
	})
}

func TestJSONEncodesEqualMapsToEqualBytes(t *testing.T) {
	sameBytesEveryTime[map[string]map[int]string](t, codec.JSON[map[string]map[int]string]{}, func() map[string]map[int]string {
		return bigMap(16, func(i int) string { return fmt.Sprint("k", i) }, func(i int) map[int]string {
			return bigMap(16, func(j int) int { return j }, func(j int) string { return "v" })
		})
	})
}

func TestMsgPackSortedMapsStillDecode(t *testing.T) {
	c := codec.MsgPack[map[int]string]{}
	in := bigMap(40, func(i int) int { return 40 - i }, func(i int) string { return fmt.Sprint(i) })
	b, err := c.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Decode(b)
	if err != nil || len(out) != len(in) {
		t.Fatalf("decode: %v, %d entries", err, len(out))
	}
	for k, v := range in {
		if out[k] != v {
			t.Fatalf("entry %d: %q, want %q", k, out[k], v)
		}
	}
}
