package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/schema"
)

// TestServeEnforcesTheSchemasGrants generates the authorization file of a
// schema's roles with ssgen authz, starts ssgen serve with it, and tries
// every request (SET, GET, KEYNOTIFY, SCAN, VDEL, DEL) of every client on
// every key of the schema and one outside it: each succeeds exactly when
// the schema grants it. The expectations are written out by hand, and
// checked against the schema's own reading of its grants.
func TestServeEnforcesTheSchemasGrants(t *testing.T) {
	dir := t.TempDir()
	authzFile, pwFile := filepath.Join(dir, "authz.yaml"), filepath.Join(dir, "passwd")
	if r := runSchemaVerb(t, "authz", "--format", "serve", "-o", authzFile, "testdata/authz/ssgen.yaml"); r.code != exitOK {
		t.Fatalf("authz: exit %d: %s", r.code, r.stderr)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, pwFile, []byte("auditor:"+string(hash)+"\n"))

	const (
		setPoint = "thermostats/k/setPoint"
		reading  = "thermostats/k/reading"
		edit     = "thermostats/k/edit"
		zoneName = "zones/7/name"
		version  = "version"
		other    = "other" // in no declaration
	)
	keys := []string{setPoint, reading, edit, zoneName, version, other}
	type client struct {
		id, user    string
		read, write []string // the keys it may read and write
	}
	clients := []client{
		{id: "console", read: []string{setPoint, reading, edit, version}, write: []string{setPoint, edit}},
		{id: "sensor-1", write: []string{reading}},
		{id: "audit-1", user: "auditor", read: []string{zoneName, version}},
		{id: "sensorX"},  // misses the sensor-* wildcard
		{id: "auditor"},  // a client id that is a role's user name, unauthenticated
		{id: "intruder"}, // named by no role
	}
	checkAgainstSchema(t, "testdata/authz/ssgen.yaml", map[string][2][]string{
		"operator": {clients[0].read, clients[0].write},
		"sensor":   {clients[1].read, clients[1].write},
		"auditor":  {clients[2].read, clients[2].write},
	})

	sp := backgroundServe(t, "serve", "--listen", "127.0.0.1:0", "--authz-file", authzFile,
		"--password-file", pwFile, "--allow-anonymous")
	lines := sp.lines
	if !lines.Scan() {
		t.Fatalf("no URL printed; stderr:\n%s", sp.stderr)
	}
	url := lines.Text()
	go func() { _, _ = io.Copy(io.Discard, sp.out) }()

	dial := func(c client) *runtime.Client {
		cfg, err := runtime.FromURL(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientID, cfg.Timeout = c.id, 5*time.Second
		if c.user != "" {
			cfg.Username, cfg.Password = c.user, []byte("pw")
		}
		dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer dcancel()
		rc, err := runtime.Dial(dctx, cfg)
		if err != nil {
			t.Fatalf("dial %s: %v; stderr:\n%s", c.id, err, sp.stderr)
		}
		t.Cleanup(func() { _ = rc.Close() })
		return rc
	}
	rctx, rcancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer rcancel()
	conns := make([]*runtime.Client, len(clients))
	for i, c := range clients {
		conns[i] = dial(c)
	}
	// allowed checks one request's error: nil (or a miss, or VDEL's
	// mismatch) when the role may, the state store's refusal when it may
	// not, nothing else.
	allowed := func(c client, op, key string, want bool, err error) {
		t.Helper()
		switch {
		case want && err != nil && !errors.Is(err, runtime.ErrNotFound) && !errors.Is(err, runtime.ErrConditionNotMet):
			t.Errorf("%s %s %s: %v, want it allowed", c.id, op, key, err)
		case !want && !errors.Is(err, runtime.ErrNotAuthorized):
			t.Errorf("%s %s %s: %v, want ErrNotAuthorized", c.id, op, key, err)
		}
	}

	// Writes first: each key ends up holding a value if anyone may write it.
	for i, c := range clients {
		for _, k := range keys {
			_, err := conns[i].Set(rctx, []byte(k), []byte(c.id), runtime.SetOptions{})
			allowed(c, "SET", k, slices.Contains(c.write, k), err)
		}
	}
	for i, c := range clients {
		for _, k := range keys {
			_, _, err := conns[i].Get(rctx, []byte(k))
			allowed(c, "GET", k, slices.Contains(c.read, k), err)
			err = conns[i].KeyNotify(rctx, []byte(k))
			allowed(c, "KEYNOTIFY", k, slices.Contains(c.read, k), err)
		}
		// SCAN lists exactly the existing keys the client may read.
		var listed []string
		for key, err := range conns[i].ListKeys("*", runtime.ListOptions{}).All(rctx) {
			if err != nil {
				t.Fatalf("%s SCAN: %v", c.id, err)
			}
			listed = append(listed, string(key))
		}
		var want []string
		for _, k := range c.read {
			if k == setPoint || k == reading || k == edit { // the keys someone may write
				want = append(want, k)
			}
		}
		slices.Sort(listed)
		slices.Sort(want)
		if !slices.Equal(listed, want) {
			t.Errorf("%s SCAN * listed %q, want %q", c.id, listed, want)
		}
	}
	// Deletes last: VDEL with a value that does not match deletes nothing.
	for i, c := range clients {
		for _, k := range keys {
			_, _, err := conns[i].VDel(rctx, []byte(k), []byte("no such value"), runtime.DelOptions{})
			allowed(c, "VDEL", k, slices.Contains(c.write, k), err)
			_, _, err = conns[i].Del(rctx, []byte(k), runtime.DelOptions{})
			allowed(c, "DEL", k, slices.Contains(c.write, k), err)
		}
	}
	sp.stop()
}

// checkAgainstSchema compares the hand-written expectations (role → read
// and write key lists of the test's concrete keys) with the schema's
// Permissions, so that the test's table and the schema cannot drift
// apart unnoticed.
func checkAgainstSchema(t *testing.T, file string, want map[string][2][]string) {
	t.Helper()
	s, err := schema.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	concrete := strings.NewReplacer("{id}", "k", "{n}", "7")
	for _, r := range s.Roles {
		var read, write []string
		for _, p := range r.Permissions() {
			k := concrete.Replace(p.Path().String())
			if p.Access&schema.AccessRead != 0 {
				read = append(read, k)
			}
			if p.Access&schema.AccessWrite != 0 {
				write = append(write, k)
			}
		}
		w := want[r.Name]
		for _, l := range [][]string{read, write, w[0], w[1]} {
			slices.Sort(l)
		}
		if !slices.Equal(read, w[0]) || !slices.Equal(write, w[1]) {
			t.Errorf("role %s: the schema grants read %q write %q; the test expects read %q write %q", r.Name, read, write, w[0], w[1])
		}
	}
}

func TestAuthzAndPersistenceUsage(t *testing.T) {
	dir := t.TempDir()
	noRoles := writeFile(t, dir, "ssgen.yaml", thermostatSchema(t))
	// A schema with nothing to print: both verbs exit 1, print nothing
	// and say why in one line.
	r := runSchemaVerb(t, "authz", noRoles)
	r.wantCode(t, exitNegative)
	if !strings.Contains(r.stderr, "declares no roles") || r.stdout != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	runSchemaVerb(t, "authz", "--format", "yaml", "testdata/authz/ssgen.yaml").wantCode(t, exitUsage)

	r = runSchemaVerb(t, "authz", "--namespace", "ns", "testdata/authz/ssgen.yaml")
	r.wantCode(t, exitOK)
	for _, want := range []string{"kind: BrokerAuthorization", "name: ssgen-plant", "namespace: ns", "keyType: Pattern", "- thermostats/*/setPoint", "method: ReadWrite"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("authz output lacks %q:\n%s", want, r.stdout)
		}
	}

	r = runSchemaVerb(t, "persistence", noRoles)
	r.wantCode(t, exitNegative)
	if !strings.Contains(r.stderr, "no key") || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("persistence of a schema without persist keys: stdout %q stderr %q", r.stdout, r.stderr)
	}
}
