// Package etcdstore keeps a state store highly available on etcd: several
// ssgen serve processes attached to one MQTT broker share an etcd prefix;
// one, elected through etcd, is the leader and alone answers requests, the
// others are hot standbys following etcd's keyspace.
//
// # Layout
//
// Under the prefix (Config.Prefix, "/ssgen/" by default) etcd's keyspace
// is the whole store, so it is its own snapshot:
//
//	PREFIX k/<key>                      one state store key: its engine record
//	                                    (value, version, fencing token, deadline)
//	PREFIX w/<len(client)><client><key> one KEYNOTIFY registration (empty value)
//	PREFIX clock                        the leader clock's high-water mark
//	PREFIX leader/<lease>               the election's candidates
//
// Prefixes of stores sharing one etcd must not nest: Open refuses one
// inside a prefix holding a clock or candidates, or holding such keys of
// another store outside its k/ and w/ subtrees (prefix.go).
//
// # Writing
//
// The leader's engine runs with every key kept (persist-all) and its
// KEYNOTIFY registrations journaled; its group commit (persist.GroupCommit
// over Leader) hands the Leader groups of about MaxTxnOps changes and
// MaxTxnBytes bytes, and the Leader cuts every group into etcd
// transactions of at most MaxTxnOps operations and maxRequest bytes
// (keys, values, the clock and the condition counted; one engine write
// of many keys, an expiry, is cut too), each conditioned on the
// leader's election key still existing with its creation revision. A
// deposed leader's transaction fails: its requests are answered with the
// persistence error and it steps down to standby, reloading from etcd.
//
// # Following
//
// A standby loads the prefix at a revision and watches from the next one,
// keeping records, registrations and the clock in memory. On winning the
// election it catches up to etcd's current revision (catchUp: the keys
// changed since, and deletions found by counting), restores an engine
// from memory (no reload), moves its clock after every stamp seen, and
// attaches to the broker: it sends every registration one notification of
// its key's state (a change the dead leader answered but did not notify
// reaches its watcher so), and only then subscribes to requests.
//
// # Compaction
//
// etcd keeps every revision until compacted. The leader compacts the
// history every CompactEvery at the revision it saw one period before, so
// a standby more than one period behind reloads the prefix instead of
// resuming its watch.
package etcdstore
