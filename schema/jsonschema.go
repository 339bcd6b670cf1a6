package schema

import _ "embed"

// JSONSchema is the JSON Schema (draft 2020-12) of the ssgen.yaml format,
// for editors: it catches misspelt fields and completes names, while Load
// remains the judge of validity.
//
//go:embed ssgen.schema.json
var JSONSchema []byte

// JSONSchemaURL is where the JSON Schema is published, for the
// "# yaml-language-server: $schema=" line of a schema file.
const JSONSchemaURL = "https://raw.githubusercontent.com/ssgen/ssgen/main/schema/ssgen.schema.json"
