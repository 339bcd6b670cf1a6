package interop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/iot-operations-sdks/go/services/statestore"
	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/schemacheck"
)

const enforceSchema = `version: 1
package: enforced
types:
  Mode:
    enum: [heat, cool]
  Config:
    fields:
      mode: Mode
      target: float64
keys:
  Config:
    path: "devices/{id}/config"
    params: {id: string}
    type: Config
    encoding: json
`

// The official Go SDK writes a value that does not fit its key's
// declaration to a server enforcing the schema, in each mode: off stores
// it, warn stores it, refuse answers the SDK an error whose text names the
// declaration and field path and stores nothing.
func TestEnforcedSchemaWithTheSDK(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ssgen.yaml")
	if err := os.WriteFile(file, []byte(enforceSchema), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := schema.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const key, good, misfit = "devices/d1/config", `{"mode":"heat","target":20}`, `{"mode":"warm","target":20}`
	for _, mode := range []server.Enforce{server.EnforceOff, server.EnforceWarn, server.EnforceRefuse} {
		t.Run([...]string{"off", "warn", "refuse"}[mode], func(t *testing.T) {
			srv := startServerWith(t, func(o *server.Options) { o.Enforce, o.WriteCheck = mode, schemacheck.New(sc) })
			c := dial(t, srv, "writer")
			ctx := bounded(t)
			if _, err := c.Set(ctx, key, good); err != nil {
				t.Fatalf("Set of a fitting value: %v", err)
			}
			if _, err := c.Set(ctx, "undeclared", misfit); err != nil {
				t.Fatalf("Set of an undeclared key: %v", err)
			}
			_, err := c.Set(ctx, key, misfit)
			got, gerr := c.Get(ctx, key)
			if gerr != nil {
				t.Fatalf("Get: %v", gerr)
			}
			if mode != server.EnforceRefuse {
				if err != nil || got.Value != misfit {
					t.Fatalf("Set of a misfit = %v, stored %q; want it stored", err, got.Value)
				}
				return
			}
			var se statestore.ServiceError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "schema violation: Config .mode:") {
				t.Fatalf("Set of a misfit = %v (%T); want the schema violation naming Config .mode", err, err)
			}
			if got.Value != good {
				t.Fatalf("stored %q after a refused write, want %q", got.Value, good)
			}
		})
	}
}

const transitionSchema = `version: 1
package: enforced
types:
  Device:
    fields:
      serial: {type: string, immutable: true}
      seq: {type: uint64, monotonic: increasing}
keys:
  Device:
    path: "devices/{id}/device"
    params: {id: string}
    type: Device
    encoding: json
`

// The official Go SDK breaks a transition rule (it writes blind, so only
// the store can check): off and warn store the write, refuse answers it
// with the schema violation naming the field path and stores nothing.
func TestEnforcedTransitionRulesWithTheSDK(t *testing.T) {
	sc, err := schema.Load("ssgen.yaml", []byte(transitionSchema))
	if err != nil {
		t.Fatal(err)
	}
	const key, first, next, broken = "devices/d1/device", `{"serial":"A","seq":1}`, `{"serial":"A","seq":2}`, `{"serial":"B","seq":3}`
	for _, mode := range []server.Enforce{server.EnforceOff, server.EnforceWarn, server.EnforceRefuse} {
		t.Run([...]string{"off", "warn", "refuse"}[mode], func(t *testing.T) {
			srv := startServerWith(t, func(o *server.Options) {
				o.Enforce, o.WriteCheck, o.TransitionCheck = mode, schemacheck.New(sc), schemacheck.Transitions(sc)
			})
			c := dial(t, srv, "writer")
			ctx := bounded(t)
			for _, v := range []string{first, next} {
				if _, err := c.Set(ctx, key, v); err != nil {
					t.Fatalf("Set %s: %v", v, err)
				}
			}
			_, err := c.Set(ctx, key, broken)
			got, gerr := c.Get(ctx, key)
			if gerr != nil {
				t.Fatalf("Get: %v", gerr)
			}
			if mode != server.EnforceRefuse {
				if err != nil || got.Value != broken {
					t.Fatalf("Set = %v, stored %q; want it stored", err, got.Value)
				}
				return
			}
			var se statestore.ServiceError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), `schema violation: Device .serial: immutable field changed from "A" to "B"`) {
				t.Fatalf("Set = %v (%T); want the schema violation naming Device .serial", err, err)
			}
			if got.Value != next {
				t.Fatalf("stored %q after a refused write, want %q", got.Value, next)
			}
		})
	}
}
