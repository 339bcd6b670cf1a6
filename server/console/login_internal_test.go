package console

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/server"
)

func testPasswords(t *testing.T) server.Passwords {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := server.ParsePasswords(bytes.NewReader([]byte("alice:" + string(hash) + "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return pw
}

// TestPasswordCheckWithNoSlotFreeIsBusy reproduces issue #25: with both
// check slots held by a wrong-password flood, a real sign-in was answered
// as a wrong password. It is now errLoginBusy (503, retry), and the right
// password passes once a slot is free.
func TestPasswordCheckWithNoSlotFreeIsBusy(t *testing.T) {
	g := newGate(&Options{Auth: AuthPassword, Passwords: testPasswords(t)})
	g.wait = time.Millisecond
	for range loginSlots {
		g.slots <- struct{}{} // the flood's checks in progress
	}
	r := httptest.NewRequest("POST", "/login", nil)
	if ok, err := g.checkPassword(r, "alice", "pw"); ok || err != errLoginBusy {
		t.Fatalf("with every slot taken: %v %v, want errLoginBusy", ok, err)
	}
	<-g.slots
	if ok, err := g.checkPassword(r, "alice", "pw"); !ok || err != nil {
		t.Fatalf("with a slot free: %v %v", ok, err)
	}
}

// TestPasswordChecksPerSourceAreLimited: one address gets loginBurst
// checks, then one per loginEvery; another address is not affected; the
// table of addresses stays bounded under a flood from many addresses; an
// IPv6 /64 counts as one address.
func TestPasswordChecksPerSourceAreLimited(t *testing.T) {
	g := newGate(&Options{Auth: AuthPassword, Passwords: testPasswords(t)})
	now := time.Unix(1e9, 0)
	for i := range loginBurst {
		if !g.spend("10.0.0.1", now) {
			t.Fatalf("check %d refused", i)
		}
	}
	if g.spend("10.0.0.1", now) {
		t.Fatal("a check beyond the burst")
	}
	if !g.spend("10.0.0.2", now) {
		t.Fatal("another address refused")
	}
	if !g.spend("10.0.0.1", now.Add(loginEvery)) || g.spend("10.0.0.1", now.Add(loginEvery)) {
		t.Fatal("not one check per loginEvery after the burst")
	}
	for i := range 3 * maxLoginSources {
		g.spend(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), now)
		if len(g.sources) > maxLoginSources {
			t.Fatalf("%d sources kept", len(g.sources))
		}
	}
	a := httptest.NewRequest("GET", "/", nil)
	a.RemoteAddr = "[2001:db8::1]:5000"
	b := httptest.NewRequest("GET", "/", nil)
	b.RemoteAddr = "[2001:db8::ffff:1]:6000"
	if sourceOf(a) != sourceOf(b) || sourceOf(a) != "2001:db8::/64" {
		t.Fatalf("IPv6 sources %q %q", sourceOf(a), sourceOf(b))
	}
}
