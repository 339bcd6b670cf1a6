package interop

import (
	"errors"
	"testing"

	"github.com/Azure/iot-operations-sdks/go/protocol/hlc"
	"github.com/Azure/iot-operations-sdks/go/services/statestore"
	sserrors "github.com/Azure/iot-operations-sdks/go/services/statestore/errors"
)

func TestSetReturnsVersionThatGetReturns(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	set, err := c.Set(ctx, "k1", "v1")
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	if !set.Value || set.Version.IsZero() {
		t.Fatalf("Set = {%v %v}, want stored with a version", set.Value, set.Version)
	}
	got, err := c.Get(ctx, "k1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Value != "v1" || got.Version.Compare(set.Version) != 0 {
		t.Fatalf("Get = {%q %v}, want {%q %v}", got.Value, got.Version, "v1", set.Version)
	}

	again, err := c.Set(ctx, "k1", "v2")
	if err != nil {
		t.Fatalf("second Set: %v", err)
	}
	if again.Version.Compare(set.Version) <= 0 {
		t.Fatalf("second Set version %v not after first %v", again.Version, set.Version)
	}
	got, err = c.Get(ctx, "k1")
	if err != nil {
		t.Fatalf("Get after overwrite: %v", err)
	}
	if got.Value != "v2" || got.Version.Compare(again.Version) != 0 {
		t.Fatalf("Get = {%q %v}, want {%q %v}", got.Value, got.Version, "v2", again.Version)
	}
}

// The SDK reads "absent" from a GET response without __ts, so a miss must
// come back as the zero response, while an empty value keeps its version.
func TestGetDistinguishesMissFromEmptyValue(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	miss, err := c.Get(ctx, "never-set")
	if err != nil {
		t.Fatalf("Get miss: %v", err)
	}
	if miss.Value != "" || !miss.Version.IsZero() {
		t.Fatalf("Get miss = {%q %v}, want the zero response", miss.Value, miss.Version)
	}

	set, err := c.Set(ctx, "empty", "")
	if err != nil || !set.Value {
		t.Fatalf("Set empty value = %v, %v", set, err)
	}
	got, err := c.Get(ctx, "empty")
	if err != nil {
		t.Fatalf("Get empty: %v", err)
	}
	if got.Value != "" || got.Version.Compare(set.Version) != 0 {
		t.Fatalf("Get empty = {%q %v}, want {\"\" %v}", got.Value, got.Version, set.Version)
	}
}

func TestDelCountsDeletedKeys(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	if _, err := c.Set(ctx, "k", "v"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	for _, want := range []int{1, 0} {
		res, err := c.Del(ctx, "k")
		if err != nil {
			t.Fatalf("Del: %v", err)
		}
		if res.Value != want {
			t.Fatalf("Del = %d, want %d", res.Value, want)
		}
	}
	got, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("Get after Del: %v", err)
	}
	if !got.Version.IsZero() {
		t.Fatalf("Get after Del = {%q %v}, want absent", got.Value, got.Version)
	}
}

func TestSetConditions(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	steps := []struct {
		name  string
		value string
		cond  statestore.Condition
		want  bool   // stored
		after string // value read back afterwards
	}{
		{"NX on absent key stores", "a", statestore.NotExists, true, "a"},
		{"NX on present key is refused", "b", statestore.NotExists, false, "a"},
		{"NX with the same value is still refused", "a", statestore.NotExists, false, "a"},
		{"NEX with a different value is refused", "b", statestore.NotExistsOrEqual, false, "a"},
		{"NEX with the same value stores", "a", statestore.NotExistsOrEqual, true, "a"},
		{"unconditional SET overwrites", "b", statestore.Always, true, "b"},
	}
	var last hlc.HybridLogicalClock
	for _, s := range steps {
		res, err := c.Set(ctx, "cond", s.value, statestore.WithCondition(s.cond))
		if err != nil {
			t.Fatalf("%s: Set: %v", s.name, err)
		}
		if res.Value != s.want {
			t.Fatalf("%s: Set stored = %v, want %v", s.name, res.Value, s.want)
		}
		got, err := c.Get(ctx, "cond")
		if err != nil {
			t.Fatalf("%s: Get: %v", s.name, err)
		}
		if got.Value != s.after {
			t.Fatalf("%s: value = %q, want %q", s.name, got.Value, s.after)
		}
		if s.want {
			if res.Version.Compare(got.Version) != 0 {
				t.Fatalf("%s: Get version %v, Set returned %v", s.name, got.Version, res.Version)
			}
			if !last.IsZero() && res.Version.Compare(last) <= 0 {
				t.Fatalf("%s: version %v not after previous %v", s.name, res.Version, last)
			}
			last = res.Version
		} else if got.Version.Compare(last) != 0 {
			t.Fatalf("%s: refused SET changed the version from %v to %v", s.name, last, got.Version)
		}
	}

	// NEX on an absent key behaves like a plain SET.
	res, err := c.Set(ctx, "nex-absent", "x", statestore.NotExistsOrEqual)
	if err != nil || !res.Value {
		t.Fatalf("NEX on absent key = %v, %v; want stored", res, err)
	}
}

func TestVDelComparesValue(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	if _, err := c.Set(ctx, "vk", "mine"); err != nil {
		t.Fatalf("Set: %v", err)
	}
	steps := []struct {
		name  string
		value string
		want  int
		left  bool // key still present afterwards
	}{
		{"value differs", "theirs", -1, true},
		{"value matches", "mine", 1, false},
		{"key absent", "mine", 0, false},
	}
	for _, s := range steps {
		res, err := c.VDel(ctx, "vk", s.value)
		if err != nil {
			t.Fatalf("%s: VDel: %v", s.name, err)
		}
		if res.Value != s.want {
			t.Fatalf("%s: VDel = %d, want %d", s.name, res.Value, s.want)
		}
		got, err := c.Get(ctx, "vk")
		if err != nil {
			t.Fatalf("%s: Get: %v", s.name, err)
		}
		if present := !got.Version.IsZero(); present != s.left {
			t.Fatalf("%s: key present = %v, want %v", s.name, present, s.left)
		}
	}
}

// The SDK surfaces -ERR payloads as statestore.ServiceError values holding
// the service's exact text; these tests compare against the SDK's own
// constants, so a reworded message fails here.
func TestFencingErrorsMatchSDKConstants(t *testing.T) {
	c := dial(t, startServer(t), "c")
	ctx := bounded(t)

	// A version issued before the lock was taken: a valid but older token.
	early, err := c.Set(ctx, "scratch", "x")
	if err != nil {
		t.Fatalf("Set scratch: %v", err)
	}
	lock, err := c.Set(ctx, "lock", "holder", statestore.NotExistsOrEqual, statestore.WithExpiry(testTimeout))
	if err != nil || !lock.Value {
		t.Fatalf("acquire lock = %v, %v", lock, err)
	}
	token := statestore.WithFencingToken(lock.Version)

	if res, err := c.Set(ctx, "guarded", "v1", token); err != nil || !res.Value {
		t.Fatalf("fenced Set on unfenced key = %v, %v; want stored", res, err)
	}
	if got, err := c.Get(ctx, "guarded"); err != nil || got.Value != "v1" {
		t.Fatalf("Get needs no token: %v, %v", got, err)
	}

	wantErr := func(name string, err error, want sserrors.Service) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: succeeded, want %q", name, string(want))
		}
		if !errors.Is(err, want) || !errors.Is(err, statestore.ErrService) {
			t.Fatalf("%s: error %v (%T), want %q", name, err, err, string(want))
		}
		var se statestore.ServiceError
		if !errors.As(err, &se) || se != want {
			t.Fatalf("%s: errors.As ServiceError = %q, want %q", name, string(se), string(want))
		}
	}

	_, err = c.Set(ctx, "guarded", "v2")
	wantErr("Set without token", err, sserrors.MissingFencingToken)
	_, err = c.Del(ctx, "guarded")
	wantErr("Del without token", err, sserrors.MissingFencingToken)
	_, err = c.VDel(ctx, "guarded", "v1")
	wantErr("VDel without token", err, sserrors.MissingFencingToken)

	older := statestore.WithFencingToken(early.Version)
	_, err = c.Set(ctx, "guarded", "v2", older)
	wantErr("Set with older token", err, sserrors.FencingTokenLowerVersion)
	_, err = c.Del(ctx, "guarded", older)
	wantErr("Del with older token", err, sserrors.FencingTokenLowerVersion)
	_, err = c.VDel(ctx, "guarded", "v1", older)
	wantErr("VDel with older token", err, sserrors.FencingTokenLowerVersion)

	if got, err := c.Get(ctx, "guarded"); err != nil || got.Value != "v1" {
		t.Fatalf("refused writes changed the key: %v, %v", got, err)
	}

	// Renewing the lock yields a newer token; writing with it raises the
	// key's token, after which the first token is stale.
	renew, err := c.Set(ctx, "lock", "holder", statestore.NotExistsOrEqual, statestore.WithExpiry(testTimeout))
	if err != nil || !renew.Value {
		t.Fatalf("renew lock = %v, %v", renew, err)
	}
	newer := statestore.WithFencingToken(renew.Version)
	if res, err := c.Set(ctx, "guarded", "v3", newer); err != nil || !res.Value {
		t.Fatalf("Set with newer token = %v, %v", res, err)
	}
	if res, err := c.Set(ctx, "guarded", "v4", token); err == nil {
		t.Fatalf("Set with superseded token = %v, want an error", res)
	} else {
		wantErr("Set with superseded token", err, sserrors.FencingTokenLowerVersion)
	}
	// An equal token proceeds.
	if res, err := c.Set(ctx, "guarded", "v5", newer); err != nil || !res.Value {
		t.Fatalf("Set with equal token = %v, %v", res, err)
	}
	if res, err := c.VDel(ctx, "guarded", "v5", newer); err != nil || res.Value != 1 {
		t.Fatalf("fenced VDel = %v, %v; want 1", res, err)
	}

	// Deleting the key removed its token: an unfenced SET works again.
	if res, err := c.Set(ctx, "guarded", "free"); err != nil || !res.Value {
		t.Fatalf("unfenced Set after delete = %v, %v", res, err)
	}
}
