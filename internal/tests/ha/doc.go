// Package ha holds the high-availability torture test of ssgen serve on
// etcd: real etcd members (internal/testkit/etcdtest), a real mosquitto
// (internal/testkit/brokertest) and several `ssgen serve --broker URL
// --store etcd://...` processes, whose leader is killed with SIGKILL round
// after round while clients write kept and fenced keys and watch them.
// After every round, every acknowledged write must be found with its
// version and fencing token, versions and tokens must only have grown, and
// every watcher must have seen every acknowledged change or a resync.
//
// The package has no API; run it with
//
//	go test ./internal/tests/ha                      # CI: 5 rounds, one etcd member killed
//	go test ./internal/tests/ha -ha.rounds=50        # longer, by hand (or SSGEN_HA_ROUNDS=50)
//	go test ./internal/tests/ha -run TestHAMeasure -ha.measure -v
//	                                                 # failover times and kept SETs, etcd vs data dir
//
// docs/ha.md states the contract the test checks, and the figures measured.
package ha
