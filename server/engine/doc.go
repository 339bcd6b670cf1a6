// Package engine is the state store's protocol engine: a deterministic
// state machine from decoded requests to RESP3 responses and KEYNOTIFY
// notifications, with no MQTT in it. Package server decodes each PUBLISH
// into a Request (its arguments and the __ts and __ft user properties),
// calls Engine.Decide (which does not wait for the disk; Engine.Handle
// decides and waits itself), and publishes the Result and each
// Notification once what it reveals is durable.
//
// An Engine (New, with a Config) holds the keys, their versions, fencing
// tokens and deadlines, and the KEYNOTIFY registrations. Its clock comes
// from Config.Now, so a FakeClock drives expiry and clock skew in tests;
// Config.Journal keeps chosen keys durable without waiting for the disk
// under its lock (Decide, Result.Wait, Abandon). Refusals
// are the protocol's -ERR texts as Error values; Put, Lookup and Keys
// inspect and seed the store, Export and Import move it whole as a
// Snapshot.
//
// docs/wire-protocol.md is the behaviour the engine implements, including
// its check order and its choices where the protocol is silent;
// docs/server.md describes the engine's model and clock.
package engine
