package evolvev2

import (
	"reflect"
	"testing"

	"github.com/ssgen/ssgen/internal/schemaval"
	"github.com/ssgen/ssgen/schema"
)

// The Evolution the generated file declares is the one schemaval builds
// from the schema for ssgen get and the console: one set of rules.
func TestGeneratedEvolutionIsSchemavals(t *testing.T) {
	s, err := schema.LoadFile("ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := schemaval.Evolution(s.Types); !reflect.DeepEqual(ssgenEvolution, want) {
		t.Errorf("generated\n%+v\nschemaval\n%+v", ssgenEvolution, want)
	}
}
