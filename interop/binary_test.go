package interop

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/Azure/iot-operations-sdks/go/services/statestore"
)

// Keys and values are arbitrary bytes: RESP3 bulk strings carry them by
// length, and a key travels hex-encoded in the notify topic.
func TestBinaryKeysAndValuesRoundTrip(t *testing.T) {
	srv := startServer(t)
	watcher := dial(t, srv, "watcher")
	writer := dial(t, srv, "writer")
	ctx := bounded(t)

	key := "bin\x00\r\n\xff\xfe$3\r\n*key"
	value := make([]byte, 256<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range value {
		value[i] = byte(rng.Uint32())
	}
	copy(value, "\r\n$-1\r\n")
	ch := watch(t, watcher, key)

	set, err := writer.Set(ctx, key, string(value), statestore.WithPersist(true))
	if err != nil || !set.Value {
		t.Fatalf("Set = %v, %v", set, err)
	}
	got, err := writer.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal([]byte(got.Value), value) || got.Version.Compare(set.Version) != 0 {
		t.Fatalf("Get: %d bytes (equal %v), version %v; want the %d bytes set at %v",
			len(got.Value), bytes.Equal([]byte(got.Value), value), got.Version, len(value), set.Version)
	}
	n := awaitNotify(ctx, t, ch, "SET of a binary key")
	if n.Key != key || n.Operation != "SET" || !bytes.Equal([]byte(n.Value), value) {
		t.Fatalf("notification key %q op %q, %d value bytes; want key %q, SET, the value", n.Key, n.Operation, len(n.Value), key)
	}
	if res, err := writer.VDel(ctx, key, string(value)); err != nil || res.Value != 1 {
		t.Fatalf("VDel with the binary value = %v, %v; want 1", res, err)
	}
	if n := awaitNotify(ctx, t, ch, "VDEL of a binary key"); n.Key != key || n.Operation != "DELETE" {
		t.Fatalf("notification key %q op %q; want %q DELETE", n.Key, n.Operation, key)
	}
}
