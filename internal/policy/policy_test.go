package policy

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/testkit/golden"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
)

// checkGolden compares got with testdata/name, or rewrites it with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func load(t *testing.T) *schema.Schema {
	t.Helper()
	s, err := schema.LoadFile("testdata/roles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOutputsMatchTheGoldenFiles(t *testing.T) {
	s := load(t)
	var broker, serve, persist bytes.Buffer
	if err := WriteBroker(&broker, Rules(s), BrokerOptions{Name: "ssgen-plant", Namespace: "azure-iot-operations", Source: "roles.yaml"}); err != nil {
		t.Fatal(err)
	}
	dropped, err := WriteServe(&serve, Rules(s), "roles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dropped, []string{"controller"}) {
		t.Errorf("dropped %q, want the one role named by attributes", dropped)
	}
	if err := WritePersistence(&persist, PersistResources(s)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "roles.broker.yaml", broker.Bytes())
	checkGolden(t, "roles.serve.yaml", serve.Bytes())
	checkGolden(t, "roles.persistence.json", persist.Bytes())

	// ssgen serve reads what WriteServe writes.
	if _, err := server.ParsePolicy(serve.Bytes()); err != nil {
		t.Fatalf("ssgen serve refuses the file: %v", err)
	}
	// Both formats grant the same keys.
	var b struct {
		Spec struct {
			AuthorizationPolicies struct {
				Rules []struct {
					StateStoreResources []map[string]any `yaml:"stateStoreResources"`
				} `yaml:"rules"`
			} `yaml:"authorizationPolicies"`
		} `yaml:"spec"`
	}
	var sv struct {
		Rules []struct {
			StateStoreResources []map[string]any `yaml:"stateStoreResources"`
		} `yaml:"rules"`
	}
	if err := yaml.Unmarshal(broker.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(serve.Bytes(), &sv); err != nil {
		t.Fatal(err)
	}
	if len(b.Spec.AuthorizationPolicies.Rules) != len(sv.Rules) {
		t.Fatalf("%d broker rules, %d serve rules", len(b.Spec.AuthorizationPolicies.Rules), len(sv.Rules))
	}
	for i, r := range sv.Rules {
		if !reflect.DeepEqual(r.StateStoreResources, b.Spec.AuthorizationPolicies.Rules[i].StateStoreResources) {
			t.Errorf("rule %d: serve grants %v, broker %v", i, r.StateStoreResources, b.Spec.AuthorizationPolicies.Rules[i].StateStoreResources)
		}
	}
}

func TestResourcesGroupByMethodAndKeyType(t *testing.T) {
	s := load(t)
	got := map[string][]Resource{}
	for _, r := range Rules(s) {
		got[r.Role] = r.Resources
	}
	want := []Resource{
		{KeyType: "String", Keys: []string{"version"}, Method: "Read"},
		{KeyType: "Pattern", Keys: []string{"thermostats/*/reading", "thermostats/*/heater", "thermostats/*/owner"}, Method: "Read"},
		{KeyType: "Pattern", Keys: []string{"thermostats/*/setPoint", "lines/*/*/config", "thermostats/*/edit"}, Method: "ReadWrite"},
	}
	if !reflect.DeepEqual(got["operator"], want) {
		t.Errorf("operator: %+v\nwant %+v", got["operator"], want)
	}
}

func TestNotificationTopicsOnlyForExactClientIDs(t *testing.T) {
	for _, r := range Rules(load(t)) {
		for _, id := range r.NotifyIDs {
			if strings.ContainsAny(id, "*?[") {
				t.Errorf("role %s: notification topic for wildcard %q", r.Role, id)
			}
		}
	}
	if got := NotifyTopic("sensor-1"); got != "clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/73656E736F722D31/command/notify/+" {
		t.Errorf("NotifyTopic = %q", got)
	}
}

func TestAlsoPersistedNamesWhatAPatternCovers(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(`version: 1
package: p
groups:
  T:
    path: t/{id}
    params: {id: string}
    keys:
      A: {path: a, type: int, persist: true}
  U:
    path: t/{id}/u/{x}
    params: {id: string, x: int}
    keys:
      A: {path: a, type: int}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := AlsoPersisted(s)
	if len(got) != 1 || !strings.Contains(got[0], "key U.A") {
		t.Fatalf("AlsoPersisted = %q", got)
	}
}
