package runtime_test

import (
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime"
)

// TestLockKeyOf: the guard lock of a concrete key takes the key's
// parameter values by name; a key the key path's glob lists but whose
// shape is not the template's gets no lock (never a wrong one).
func TestLockKeyOf(t *testing.T) {
	for _, c := range []struct {
		keyPath, lockPath string
		key               string
		lock              string // "" for ok false
	}{
		// A group lock: the group's parameters.
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/kitchen/target", "rooms/kitchen/owner"},
		{"sites/{site}/areas/{area}/temp", "sites/{site}/areas/{area}/lock", "sites/n/areas/7/temp", "sites/n/areas/7/lock"},
		// The key's own parameters are not the lock's.
		{"sites/{site}/sensors/{id}/v", "sites/{site}/lock", "sites/n/sensors/s1/v", "sites/n/lock"},
		// A lock template may order the parameters differently.
		{"a/{x}/b/{y}", "locks/{y}/{x}", "a/1/b/2", "locks/2/1"},
		// A top-level lock: the same key for every instance.
		{"rooms/{room}/target", "locks/rooms", "rooms/hall/target", "locks/rooms"},
		{"config", "locks/config", "config", "locks/config"},
		// Parameter values are kept byte for byte: glob characters, spaces,
		// non-UTF-8.
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/a*b?[c]\\/target", "rooms/a*b?[c]\\/owner"},
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/ \xff /target", "rooms/ \xff /owner"},
		// Literals with glob characters: the glob spells them '?'.
		{"we*rd/{id}/k", "we*rd/{id}/l", "we*rd/1/k", "we*rd/1/l"},
		{"we*rd/{id}/k", "we*rd/{id}/l", "weXrd/1/k", ""},
		// Matched by the glob "rooms/*/target" but not by the template.
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/a/b/target", ""}, // '*' spans '/'
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms//target", ""},    // empty parameter
		// Other shapes.
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/a/targets", ""},
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/a/target/", ""},
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/a", ""},
		{"rooms/{room}/target", "rooms/{room}/owner", "", ""},
		{"config", "locks/config", "config/x", ""},
		{"config", "locks/config", "", ""},
	} {
		lock, ok := runtime.LockKeyOf(c.keyPath, c.lockPath)(([]byte)(c.key))
		if ok != (c.lock != "") || string(lock) != c.lock {
			t.Errorf("LockKeyOf(%q, %q)(%q) = %q, %v; want %q", c.keyPath, c.lockPath, c.key, lock, ok, c.lock)
		}
	}
}

// TestLockKeyOfRefusesKeysTheGlobLists: the keys LockKeyOf refuses above
// that the key path's ListKeys glob (schema.Path.Glob) lists, so that the
// check is needed, not hypothetical.
func TestLockKeyOfRefusesKeysTheGlobLists(t *testing.T) {
	for _, c := range []struct{ keyPath, lockPath, glob, key string }{
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/*/target", "rooms/a/b/target"},
		{"rooms/{room}/target", "rooms/{room}/owner", "rooms/*/target", "rooms//target"},
		{"we*rd/{id}/k", "we*rd/{id}/l", "we?rd/*/k", "weXrd/1/k"},
	} {
		if !glob.Compile(c.glob).Match(c.key) {
			t.Fatalf("glob %q does not match %q", c.glob, c.key)
		}
		if lock, ok := runtime.LockKeyOf(c.keyPath, c.lockPath)([]byte(c.key)); ok {
			t.Errorf("%q: lock %q", c.key, lock)
		}
	}
}

func TestLockKeyOfPanicsOnAMalformedTemplate(t *testing.T) {
	for _, c := range []struct{ keyPath, lockPath, want string }{
		{"rooms/{room}/target", "rooms/{other}/owner", `lock parameter "other" is not in key path`},
		{"rooms//target", "owner", "empty segment"},
		{"rooms/{room/target", "owner", "malformed parameter"},
		{"rooms/{room}/target", "", "empty segment"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, "LockKeyOf") || !strings.Contains(s, c.want) {
					t.Errorf("LockKeyOf(%q, %q): panic %v, want %q", c.keyPath, c.lockPath, r, c.want)
				}
			}()
			runtime.LockKeyOf(c.keyPath, c.lockPath)
		}()
	}
}
