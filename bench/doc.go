// Package bench is the load generator behind "ssgen bench": it drives a
// state store with many runtime clients and requests in flight, records
// every latency, and runs a raw MQTT 5 request/response echo through the
// same broker as a baseline, so that a figure taken on a busy machine can
// still be judged by its ratio to what the broker alone achieves.
//
// Two modes:
//   - requests: Clients × InFlight workers issue GET/SET/DEL in the
//     proportions of Mix over a key space, until Requests are done or
//     Duration has passed;
//   - watch: Watchers watchers of one key, spread over WatchClients
//     clients; a separate client SETs the key once per round and the
//     latency from the start of that SET to each watcher's notification
//     is recorded.
//
// Percentiles are exact: every sample is kept and sorted (a bounded run of
// a million requests costs 8 MB).
package bench
