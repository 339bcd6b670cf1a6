// Package protocol is the state store protocol's vocabulary, written once
// and shared by the client runtime, the server, its engine and the load
// generator: the service id and topic names (topics.go), the envelope's
// user property names, values and status codes (envelope.go), the verbs,
// options and notification words of the payloads (commands.go), the exact
// -ERR texts (errors.go), the rule of which client owns which topic, and
// the SDK tests' fault vocabulary (faults.go).
// docs/wire-protocol.md describes the protocol these names belong to.
//
// # What the state store owns under "clients/"
//
// The service writes two kinds of topics under ClientsRoot: notifications,
// under its own level "clients/statestore/", and its answers on a client's
// Response Topic, under the client's level. Those, and only those, are
// protected (ServiceOwned): a topic under "clients/statestore/", or under
// any level followed by "statestore/…" (the Go and .NET SDKs' response
// topics) or "services/statestore/…" (the Rust SDK's and ssgen's). Only
// the client the topic is for reads it (MaySubscribe), no other client
// writes it (MayPublish), and the service answers a request only under a
// level its requester owns (MayBeAnsweredOn). Everything else under
// "clients/" is ordinary MQTT, left to the broker's rules: the official
// SDKs' command invokers take answers on "clients/{invokerId}/{requestTopic}",
// where the executor, another client, publishes.
//
// A client with id ID owns exactly these levels:
//
//   - HEX(ID), the upper-case hex of the id's bytes. The official Go SDK puts
//     its state store response topics there, and the service puts every
//     notification for the client under NotifyPrefix/HEX(ID).
//   - ID itself, when ID is a plain level (PlainLevel): a single level, not
//     "statestore", and not the upper-case hex of another id the broker
//     accepts. The Rust and .NET SDKs put their response topics there.
//
// Only ids the broker accepts own anything (ValidClientID: valid UTF-8, no
// control characters). The last exclusion is what keeps ownership unique:
// "76696374696D2D617070" would otherwise own the level that is the hex of
// the id "victim-app". An upper-case hex id whose decoding no client can
// connect with, such as the MAC address "A4C138F0E1D2" (not UTF-8) or the
// serial "00124B001CAF8E21" (a NUL), contests nobody's level and stays
// plain. No two ids own a common level (see OwnsLevel), and the level
// "statestore" belongs to the service alone.
package protocol
