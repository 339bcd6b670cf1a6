// Package server is a local Azure IoT Operations state store: the protocol
// engine (package engine) put on MQTT 5, inside an embedded mochi broker
// or attached as a client to any MQTT 5 broker (Options.Broker). It
// answers the protocol of docs/wire-protocol.md, so the official SDKs and
// ssgen's runtime work against it as against the real service.
//
// A Server is made by New from Options, started and closed, like
// nats-server or miniredis:
//
//	srv, err := server.New(server.Options{Listen: "127.0.0.1:0"})
//	err = srv.Start()
//	defer srv.Close()
//	url := srv.URL() // mqtt://127.0.0.1:PORT
//
// Options.Now replaces the engine's clock (an engine.FakeClock makes
// expiry testable without waiting); Limits bounds what one client or
// request may cost; Security adds TLS, passwords (Passwords) and
// authorization rules (Policy) to the embedded broker; DataDir keeps keys
// on disk, checked on open (DamageError, Repair); OnRequest, OnKeyChange
// and OnCommit observe it (package server/console builds on them).
// Access control (TLS, passwords, authorization, the topic rule) is
// package server/access and the durable store package server/persist;
// this package wires them in and keeps their names (Security, Policy,
// DamageError, …) as aliases.
// Package servertest starts servers on a free loopback port for tests;
// `ssgen serve` runs one from the shell.
//
// docs/server.md describes the modes, persistence, snapshots, logging,
// observing, limits and security, and the engine's model and clock;
// docs/reliability.md what holds under faults; docs/limits.md every
// limit and its default; docs/security.md the attacks and how each is
// refused.
package server
