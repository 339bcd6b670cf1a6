package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

func compileJSONSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(JSONSchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(JSONSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// yamlInstance turns a YAML file into the JSON value an editor validates.
func yamlInstance(t *testing.T, file string) any {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(stringKeys(v))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// stringKeys turns the map[any]any yaml makes of a mapping with
// non-string keys (previous: {1: …}) into the map[string]any an editor
// sees.
func stringKeys(v any) any {
	switch x := v.(type) {
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = stringKeys(e)
		}
		return out
	case map[string]any:
		for k, e := range x {
			x[k] = stringKeys(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stringKeys(e)
		}
	}
	return v
}

func TestJSONSchemaAcceptsEveryValidSchema(t *testing.T) {
	sch := compileJSONSchema(t)
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	more, _ := filepath.Glob("testdata/breaking/*/*.yaml")
	for _, f := range append(files, more...) {
		if err := sch.Validate(yamlInstance(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestJSONSchemaRejectsShapeErrors pins that editors flag the mistakes a
// JSON Schema can see; the rest (names meeting, paths, guards) only Load
// sees.
func TestJSONSchemaRejectsShapeErrors(t *testing.T) {
	sch := compileJSONSchema(t)
	for _, name := range []string{
		"top-level-unknown-field", "version-unsupported", "package-missing", "encoding-unknown",
		"type-unknown-field", "type-with-two-kinds", "type-without-kind", "enum-empty",
		"field-unknown-option", "field-optional-not-bool", "field-wire-name-invalid",
		"key-type-missing", "key-path-missing", "lock-ttl-missing", "ttl-without-unit",
		"type-name-not-exported", "key-name-not-exported", "path-empty", "go-type-without-import-path",
		"role-names-nobody", "role-grants-nothing", "role-bad-principals", "role-bad-name", "persist-not-bool",
		"evolve-names", "version-reserved",
	} {
		f := filepath.Join("testdata/errors", name+".yaml")
		if err := sch.Validate(yamlInstance(t, f)); err == nil {
			t.Errorf("%s: JSON Schema accepts it", f)
		}
	}
}
