// Package faults holds the fault-injection and soak tests of the runtime
// against the real server: clients connect through internal/testkit/faultproxy,
// which cuts, black-holes and delays their connections, while the server
// (embedded, or external on mosquitto) is restarted under load. Every test
// is bounded in time, runs on loopback only and stops by itself.
//
// The package has no API; run it with
//
//	go test ./internal/tests/faults                 # a few seconds of soak
//	go test ./internal/tests/faults -soak=2m        # a longer soak (or SSGEN_SOAK=2m)
//
// docs/reliability.md lists what each test guarantees and the figures
// measured.
package faults
