package schema_test

import (
	"fmt"

	"github.com/ssgen/ssgen/schema"
)

// A generator walks the model in declaration order.
func Example() {
	s, err := schema.Load("ssgen.yaml", []byte(`
version: 1
package: thermostat
groups:
  Thermostat:
    path: thermostats/{id}
    params: {id: string}
    keys:
      Reading: {path: reading, type: float64, encoding: string, ttl: 30s, guard: Owner}
    locks:
      Owner: {path: owner, ttl: 10s}
`))
	if err != nil {
		fmt.Println(err) // every problem, one "file:line:col: message" a line
		return
	}
	for _, k := range s.AllKeys() {
		fmt.Println(k.QualifiedName(), k.FullPath(), k.Type, k.Encoding, k.TTL, k.Guard.QualifiedName())
	}
	// Output:
	// Thermostat.Reading thermostats/{id}/reading float64 string 30s Thermostat.Owner
}
