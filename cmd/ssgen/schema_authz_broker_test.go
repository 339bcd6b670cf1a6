package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/internal/testkit/brokertest"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// TestBrokerRulesOfRolesWithoutNotifyTopic applies the broker rules that
// ssgen authz generates to a real broker (mosquitto's dynamic security
// plugin, which judges SUBSCRIBE as broker authorization does) for two
// clients: "console" of the operator role, named by id, whose rule grants
// its notification topic, and "audit-1" of the auditor role, named by
// user name, whose rule cannot. Each role's {principal.clientId} is spelled
// out as the broker would for that client. The auditor connects all the
// same and reads and writes; its watch fails at once with
// ErrNotificationsUnavailable, and `ssgen watch` exits 2 saying what to
// grant; the operator watches.
func TestBrokerRulesOfRolesWithoutNotifyTopic(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "authz.yaml")
	if r := runSchemaVerb(t, "authz", "-o", manifest, "testdata/authz/ssgen.yaml"); r.code != exitOK {
		t.Fatalf("authz: exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			AuthorizationPolicies struct {
				Rules []struct {
					Principals struct {
						ClientIDs []string `yaml:"clientIds"`
						Usernames []string `yaml:"usernames"`
					} `yaml:"principals"`
					BrokerResources []struct {
						Method string   `yaml:"method"`
						Topics []string `yaml:"topics"`
					} `yaml:"brokerResources"`
				} `yaml:"rules"`
			} `yaml:"authorizationPolicies"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	// The state store service (external mode) takes requests and answers
	// in every client's topics.
	rules := brokertest.Rules{Publish: []string{"clients/#"}, Subscribe: []string{protocol.RequestTopic}}
	clientOf := map[string]string{"console": "console", "auditor": "audit-1"} // principal -> client id
	applied := 0
	for _, r := range m.Spec.AuthorizationPolicies.Rules {
		var id string
		for _, p := range append(r.Principals.ClientIDs, r.Principals.Usernames...) {
			if clientOf[p] != "" {
				id = clientOf[p]
			}
		}
		if id == "" {
			continue
		}
		applied++
		for _, br := range r.BrokerResources {
			for _, topic := range br.Topics {
				topic = strings.ReplaceAll(topic, "{principal.clientId}", id)
				switch br.Method {
				case "Publish":
					rules.Publish = append(rules.Publish, topic)
				case "Subscribe":
					rules.Subscribe = append(rules.Subscribe, topic)
				}
			}
		}
	}
	if applied != 2 {
		t.Fatalf("found the rules of %d of the 2 roles in the manifest", applied)
	}
	url := brokertest.StartWithRules(t, rules).URL()
	servertest.NewExternal(t, url)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dial := func(id string) *runtime.Client {
		cfg, err := runtime.FromURL(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientID, cfg.Timeout = id, 5*time.Second
		c, err := runtime.Dial(ctx, cfg)
		if err != nil {
			t.Fatalf("dial %s: %v", id, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	// `ssgen watch` first: the client id cannot be used twice at once.
	r := runIn(t, "", nil, "watch", "--broker", url, "--client-id", "audit-1", "version", "zones/7/name")
	if r.code != exitUsage || strings.Count(r.stderr, "notifications unavailable") != 1 ||
		!strings.Contains(r.stderr, runtime.NotifyTopicPrefix("audit-1")+"+") {
		t.Errorf("ssgen watch without notifications: exit %d, stderr %q; want 2 and one message naming the topic to grant", r.code, r.stderr)
	}

	// With --notify-without-subscription it watches (mosquitto delivers no
	// notification without a subscription, so only the start is seen).
	console := dial("console")
	if _, err := console.Set(ctx, []byte("version"), []byte("0"), runtime.SetOptions{}); err != nil {
		t.Fatalf("console SET: %v", err)
	}
	out, stop := startWatch(t, url, "--client-id", "audit-1", "--current", "--notify-without-subscription", "version")
	waitFor(t, "the RESYNC line", func() bool { return strings.Contains(out.String(), "RESYNC version 0") })
	if r := stop(); r.code != exitOK {
		t.Errorf("ssgen watch --notify-without-subscription: exit %d, stderr %q", r.code, r.stderr)
	}

	auditor := dial("audit-1")
	if err := auditor.NotificationsErr(); !errors.Is(err, runtime.ErrNotificationsUnavailable) {
		t.Fatalf("audit-1: NotificationsErr %v, want ErrNotificationsUnavailable", err)
	}
	if _, err := auditor.Set(ctx, []byte("version"), []byte("1"), runtime.SetOptions{}); err != nil {
		t.Fatalf("audit-1 SET: %v", err)
	}
	if v, _, err := auditor.Get(ctx, []byte("version")); err != nil || string(v) != "1" {
		t.Fatalf("audit-1 GET: %q, %v", v, err)
	}
	for _, err := range auditor.Watch(ctx, []byte("version")) {
		if !errors.Is(err, runtime.ErrNotificationsUnavailable) {
			t.Fatalf("audit-1 Watch: %v, want ErrNotificationsUnavailable", err)
		}
	}
	if err := console.NotificationsErr(); err != nil {
		t.Fatalf("console: NotificationsErr %v", err)
	}
	events := console.WatchWith(ctx, []byte("version"), runtime.WatchOptions{Current: true})
	for ev, err := range events {
		if err != nil || ev.Kind != runtime.EventResync || string(ev.Value) != "1" {
			t.Fatalf("console Watch: %+v, %v; want a Resync with the value", ev, err)
		}
		break
	}
}
