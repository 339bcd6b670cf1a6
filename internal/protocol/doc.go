// Package protocol is the state store protocol's vocabulary, written once
// and shared by the client runtime, the server, its engine and the load
// generator: the service id and topic names (topics.go), the envelope's
// user property names, values and status codes (envelope.go), the verbs,
// options and notification words of the payloads (commands.go), the exact
// -ERR texts (errors.go), and the rule of which client owns which topic.
// docs/wire-protocol.md describes the protocol these names belong to.
//
// # Who owns a topic
//
// Under "clients/", the second topic level names the owner of everything
// below it. A client with id ID owns exactly these levels:
//
//   - HEX(ID), the upper-case hex of the id's bytes. The official Go SDK puts
//     its response topics there, and the service puts every notification for
//     the client under NotifyPrefix/HEX(ID).
//   - ID itself, when ID is a plain level (PlainLevel): not empty, valid
//     UTF-8, none of '/', '+', '#' or NUL, not "statestore", and not itself
//     an upper-case hex string of even length. The Rust and .NET SDKs put
//     their response topics there.
//
// The last exclusion is what keeps ownership unique: an id such as
// "76696374696D2D617070" would otherwise own the level that is the hex
// form of the id "victim-app". No two ids own a common level (see
// OwnsLevel), and the level "statestore" belongs to the service alone.
package protocol
