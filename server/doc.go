// Package server is a local Azure IoT Operations state store: the protocol
// engine (package engine) put on MQTT 5, either inside an embedded broker
// or attached as a client to any MQTT 5 broker. It speaks the bytes of
// docs/spec wire-contract.md, so the official SDKs and ssgen's runtime
// work against it as against the real service.
//
// # Go API
//
// Like nats-server or miniredis, a Server is created, started and closed:
//
//	srv, err := server.New(server.Options{Listen: "127.0.0.1:0"})
//	err = srv.Start()
//	defer srv.Close()
//	url := srv.URL()                       // mqtt://127.0.0.1:PORT
//	srv.Engine().Put(key, value, engine.PutOptions{}) // seed
//	e, ok := srv.Engine().Lookup(key)      // inspect
//
// Options.Now replaces the engine's clock: with an engine.FakeClock, a test
// advances time and calls Engine().Expire() instead of sleeping. Package
// servertest starts servers on a free loopback port and closes them at the
// end of the test; `ssgen serve` runs one from the shell.
//
// # Modes
//
// Embedded (the default): a mochi-mqtt broker listens on Options.Listen
// (127.0.0.1:1883 by default) and the state store is a hook inside it. It
// sees every request with the requester's real client id, answers before
// the request's PUBACK, knows when clients disconnect, and can deliver
// into a client's session. It allows any client (no authentication); it
// accepts what the official Go SDK needs: Clean Start false on the first
// connection, Session Expiry 0xFFFFFFFF, Receive Maximum 65535, sessions
// that survive a dropped connection, No Local subscriptions.
//
// External (Options.Broker = "mqtt://host:port"): the store is a paho
// client of another broker (mosquitto, say), subscribed to the request
// topic, publishing responses and notifications. Being only a client, it
// cannot:
//   - see other clients disconnect, so KEYNOTIFY registrations are never
//     dropped (a watcher that went away keeps costing a notification per
//     change until it sends KEYNOTIFY STOP);
//   - disconnect a client that uses a forbidden response topic (the
//     request is dropped and logged instead);
//   - deliver a notification to a client that did not subscribe to its
//     notification topic (the broker routes to subscribers only);
//   - know the requester's client id: it takes it from the __srcId user
//     property, which every official client sends, and answers 400 when it
//     is missing.
//
// It uses a clean session on every connection (requests sent while it was
// away have timed out at their callers anyway), resubscribes after each
// reconnect, and reconnects with exponential backoff from 50 ms up to 5 s,
// each delay drawn from the upper half of its step. Start fails with
// ErrConnect when the first connection cannot be made.
//
// # Persistence
//
// With Options.DataDir (`ssgen serve --data-dir DIR`) keys survive a
// restart, kill -9 included, in a bbolt file (StoreFile) in that
// directory. A key is kept when its latest SET carried the user property
// aio-persistence=true (the real broker's dynamic persistence), or always
// with Options.PersistAll (the broker's "All" mode); a SET without the
// property makes a kept key memory-only again and deletes its record, so a
// restart never resurrects an older value. Kept per key: value, version,
// fencing token, and deadline as an absolute time. KEYNOTIFY
// registrations are not kept.
//
// A write that touches a kept key is committed (fsynced) before memory
// changes and before the response is built; if the commit fails the
// request is answered "-ERR persistence failure: ..." (engine.ErrPersistence)
// and nothing changes. Kept writes therefore cost an fsync each and are
// serialised by the engine lock (about 2,000 SET/s end to end on the
// development VM, against 6,000-9,000 in memory; see docs/reliability.md).
// On start, records whose deadline has passed are dropped silently and the
// clock moves past every stored version, so new versions sort after the
// old ones. Open and load failures are ErrStore.
//
// # Behaviour the wire contract leaves open
//
// Envelope rules run in this order; the first that applies decides:
//  1. QoS other than 1 (0, and 2 too): dropped, logged.
//  2. No Response Topic: dropped (acknowledged), logged.
//  3. Forbidden Response Topic — the request topic, anything starting
//     with the notification prefix, a wildcard, an empty level, a NUL:
//     embedded mode disconnects the client (DISCONNECT 0x82, no PUBACK);
//     external mode drops the request. Both log it.
//  4. __protVer with a major version other than 1: __stat 505,
//     __supProtMajVer 1, __requestProtVer echoing it, __stMsg
//     "unsupported version". A missing or empty __protVer means 1.0; any
//     1.x is served.
//  5. No Correlation Data: __stat 400, __propName "Correlation Data" (the
//     name the official SDKs use), __stMsg "correlation data missing".
//     Correlation Data of any other length is echoed as it came.
//  6. External mode only, no __srcId: __stat 400, __propName "__srcId".
//  7. A payload that is not a RESP3 array of bulk strings: "-ERR syntax
//     error" with __stat 200, like every state store error.
//
// Refusals with 400 and 505 carry "-ERR <message>" as payload (never an
// empty one) and no __ts. Every response carries Content Type
// application/octet-stream and no Message Expiry; notifications carry the
// same content type and __ts.
//
// Requests of one client are served in order (embedded: in the client's
// read goroutine; external: one queue per __srcId). Notifications to one
// watcher go out in the order the changes happened, through one queue per
// watching client, so a slow client holds up only itself; the queues are
// unbounded rather than lossy.
//
// Embedded delivery of a notification: it is published through the
// broker's routing, which reaches every subscriber of its topic; if the
// watching client holds no matching (non-shared) subscription at that
// moment, a copy is also written straight into its session (registered in
// its in-flight table, so it is resent after a reconnect like any QoS 1
// message). A subscription made or removed while a notification is being
// delivered may see it twice or not at all.
//
// Disconnects (embedded): when a connection ends, the client's
// registrations are dropped even if its session persists, as the contract
// says. When a new connection takes over the session, they are kept: the
// client is still there and may already have registered again.
//
// The embedded broker's per-client outbound queue (16384) and in-flight
// table (65535) are sized for notification bursts; anything mochi still
// drops is logged and counted (Server.Dropped). "not authorized" is
// never answered: there are no authorization rules.
package server
