// This package is generated from ssgen.yaml and driven by the behaviour
// tests of the generated API against a real state store. The golden test
// of package templates keeps e2e_ssgen.go fresh. (Not the package comment:
// the generated file has that.)

package e2e

//go:generate go run github.com/ssgen/ssgen/cmd/ssgen generate
