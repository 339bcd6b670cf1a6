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
// into a client's session. Unless Options.Security says otherwise (see
// Security below) it lets any client in; it accepts what the official Go SDK needs: Clean Start false on the first
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
// A write that touches a kept key is answered only once it is committed
// (fsynced), and so is every answer or notification that reveals it; if
// the commit fails the request is answered "-ERR persistence failure: ..."
// (engine.ErrPersistence) and nothing changes. Kept writes that arrive
// while a transaction is on disk share the next one (group commit), and
// the engine goes on deciding meanwhile: a request that depends on
// nothing pending is answered at once. Stats().Persist and
// Options.OnCommit report the transactions; see
// docs/reliability.md.
// On start, records whose deadline has passed are dropped silently and the
// clock moves past every stored version, so new versions sort after the
// old ones. Open and load failures are ErrStore. A data file that fails a
// check on open (a lost meta page, a truncated file, a bad page, a record
// whose CRC-32C does not match) makes New fail with a *DamageError naming
// the file and the way out; Options.Repair salvages the readable keys into
// a new file and keeps the damaged one as StoreFile.damaged-<time>.
//
// # Snapshots
//
// WriteSnapshot writes the whole store as one JSON file (package
// snapshot; docs/snapshots.md): every key with value, version, fencing
// token, time left to live and durability, and the clock. ReadSnapshot
// loads one, all or nothing: a file or key with any problem is refused
// with an error naming it (errors.Is snapshot.ErrInvalid, errors.As
// *engine.ItemError) and nothing changes. Both are safe while serving;
// ReadSnapshot between New and Start starts a server from a snapshot.
// SnapshotHandler serves both over HTTP for mounting behind an
// authenticating mux (`ssgen serve --http`, `ssgen export`, `ssgen
// import`).
//
// # Logging
//
// Options.Logger receives the service's log. Requests the state store
// refuses (-ERR) are logged at Debug as "request refused" with client,
// verb, key, error, reason (authorization, fencing, quota, timestamp,
// syntax, ...) and a detail from the request; requests the envelope rules
// refuse or drop at Warn. The embedded broker's own records are mapped to
// the service's levels: its routine messages at Debug, a connection that
// ends without a DISCONNECT at Debug (Info when the client sent something
// broken), never a record without a message.
//
// # Observing
//
// Options.OnRequest is told of every request once it is answered or
// dropped (RequestEvent: client, verb, key, status, payload, -ERR text,
// latency, and the reason behind a refusal: the envelope rule, the
// authorization rules that name the client, the fencing token or stamp
// the engine refused), OnKeyChange of every change of the key space, and
// OnCommit of every commit of the durable store. They run in the request
// path and must not block. Exec runs a request in a tool's own name and
// Clients lists the embedded broker's clients. Package server/console
// builds the web console, Prometheus metrics and health probes on them.
//
// # Behaviour the wire contract leaves open
//
// Envelope rules run in this order; the first that applies decides:
//  1. QoS other than 1 (0, and 2 too): dropped, logged.
//  2. The retain flag set: dropped (acknowledged), logged; a retained
//     request would run again for every later subscriber of the request
//     topic. External mode also subscribes with Retain Handling 2 and
//     Retain As Published, so retained requests are neither replayed to it
//     nor hidden from this check.
//  3. No Response Topic: dropped (acknowledged), logged.
//  4. Forbidden Response Topic — the request topic, anything starting
//     with the notification prefix, a wildcard, an empty level, a NUL:
//     embedded mode disconnects the client (DISCONNECT 0x82, no PUBACK);
//     external mode drops the request. Both log it.
//  5. A Response Topic under "clients/" at a level the requester does not
//     own (see Topics below; the requester is the MQTT client id, or in
//     external mode __srcId): handled as rule 4, before anything is
//     answered, so not even a 400 or 505 goes into another client's topics.
//  6. __protVer with a major version other than 1: __stat 505,
//     __supProtMajVer 1, __requestProtVer echoing it, __stMsg
//     "unsupported version". A missing or empty __protVer means 1.0; any
//     1.x is served.
//  7. No Correlation Data: __stat 400, __propName "Correlation Data" (the
//     name the official SDKs use), __stMsg "correlation data missing".
//     Correlation Data of any other length is echoed as it came.
//  8. External mode only, no __srcId: __stat 400, __propName "__srcId".
//  9. A payload that is not a RESP3 array of bulk strings: "-ERR syntax
//     error" with __stat 200, like every state store error.
//
// Refusals with 400 and 505 carry "-ERR <message>" as payload (never an
// empty one) and no __ts. Every response carries Content Type
// application/octet-stream and no Message Expiry; notifications carry the
// same content type and __ts.
//
// Requests of one client are served in order (embedded: in the client's
// read goroutine; external: one queue per __srcId). External mode sends
// each answer without waiting for its PUBACK, so the next request does not
// wait a broker round trip; answers still leave in order, the broker's
// Receive Maximum still bounds how many are unacknowledged, and a PUBACK
// that refuses one (reason code >= 0x80) is logged. Notifications to one
// watcher go out in the order the changes happened, through one queue per
// watching client, so a slow client holds up only itself; in embedded
// mode the bytes held for one client, queued or unacknowledged, are
// bounded by Limits.MaxClientOutputBytes, and a client over it is
// disconnected (0x97) rather than sent a gap.
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
// drops is logged and counted (Server.Dropped).
//
// # Limits
//
// Options.MaxKeys and MaxBytes are the store's quotas; Options.Limits adds
// per-request and per-client bounds (`ssgen serve` flag in brackets):
//
//   - MaxKeyBytes [--max-key-bytes]: the longest key SET, GET, DEL, VDEL
//     and KEYNOTIFY may name;
//   - MaxValueBytes [--max-value-bytes]: the longest SET value (VDEL's
//     value is only compared, never stored, and is not limited);
//   - MaxWatchesPerClient [--max-watches]: KEYNOTIFY registrations per
//     client; renewing a registration it holds and STOP always pass;
//   - MaxPacketBytes [--max-packet-bytes], embedded only, 64 MiB by
//     default (the real broker's default memory profile): mochi's Maximum
//     Packet Size, also announced in CONNACK;
//   - MaxInflight [--max-inflight], embedded only, 1024 by default: the
//     Receive Maximum announced in CONNACK.
//
// The first three, like the quotas, are enforced by the engine and
// answered engine.ErrQuotaExceeded (__stat 200, no __ts,
// nothing changed, no registration made). The wire contract has no other
// error meaning "too much", and the official SDKs turn that text into
// their quota error, so a client sees one kind of refusal for every size
// bound; the choice is the closest exact text rather than a new message
// that every SDK would pass through as an unknown error. A key too long
// is refused by every command, even GET, so that the rule does not depend
// on whether such a key could exist.
//
// A packet larger than MaxPacketBytes cannot be answered: mochi reads the
// fixed header, sees the remaining length, and closes the connection
// before reading or allocating the body (without a DISCONNECT 0x95: mochi
// just closes; the disconnect is logged with "packet too large"). Below that bound, memory per request is bounded by the packet:
// the RESP3 parser never sizes anything from a declared array or string
// length (a lying length is a syntax error once the payload runs out),
// the arguments alias the payload, and the engine copies a key and value
// only when it stores them.
//
// MaxInflight, thought through: the embedded broker reads a client's
// packets one at a time in that client's goroutine and answers each
// request before its PUBACK, so at most one request per client is ever
// being processed; counting requests "being processed" would always give
// 0 or 1. What can pile up is what the client sent and the broker has not
// acknowledged yet: the Receive Maximum bounds that for clients that obey
// it (paho and the official SDKs wait for a send-quota slot). A client
// that ignores it is neither refused nor disconnected — mochi's own check
// never fires, because each PUBACK restores the quota before the next
// packet is read — and its surplus requests wait in the TCP socket, not in
// the server's memory, and are answered in order. So the limit bounds a
// client's pipelining depth and therefore its share of the service; it
// never produces an -ERR. The bytes held for a client are bounded by
// MaxClientOutputBytes instead. Connections (in total and per address),
// the time and bytes before CONNECT, session expiry and the number of kept
// sessions have limits of their own (see Limits; docs/reliability.md,
// "Under attack", says why each default). In external mode the other
// broker's limits apply, and the embedded broker's limits there are
// invalid options.
//
// # Security
//
// Options.Security applies to the embedded broker only (ErrInvalidOptions
// in external mode, where the other broker authenticates). Its zero value
// lets every client do everything, as before.
//
// TLS: Security.TLS makes the listener TLS only (LoadTLS builds it from
// PEM files; `ssgen serve --tls-cert --tls-key`) and URL becomes
// mqtts://. With ClientAuth = RequireAndVerifyClientCert and ClientCAs
// (`--tls-client-ca`), the handshake refuses a client without a
// certificate signed by that CA.
//
// Authentication, in order: a client that sends a user name while
// Security.Passwords is set must match it (bcrypt; see ParsePasswords;
// `--password-file`), certificate or not; a verified client certificate
// suffices; a client with neither gets in only when no authentication is
// configured or AllowAnonymous (`--allow-anonymous`) is set. Then the
// client id must be free for that identity: a connection that would take
// over the session of an id held (connected or with a kept session) by a
// different verified user name or certificate is refused, since that
// session's subscriptions and registrations are its owner's; the same
// identity may take its id over (a reconnect). Without authentication all
// clients share the empty identity and any takeover is allowed, as in
// MQTT. The service's own client id, "$statestore", is never available. A
// refusal is CONNACK 0x86 (bad user name or password) whatever the reason.
//
// Authorization: Security.Authorization (ParsePolicy; `--authz-file`) is a
// YAML allow-list in the shape of the real broker's state store rules:
// principals (client id, user name, certificate name; exact or glob) and
// resources (keys as pattern, string, base64 binary or hex; Read, Write or
// ReadWrite). GET and KEYNOTIFY (STOP included) need Read on the key;
// SET, DEL and VDEL need Write. SCAN is always answered, listing only the
// keys the client may Read (the others are walked past, so paging skips
// no readable key; a page may then be short or empty while a token
// follows). A refusal is engine.ErrNotAuthorized
// with __stat 200 and no __ts, and changes nothing; it is decided after
// the envelope rules and the RESP3 parse, before the engine, except that
// an unknown verb, a missing key or an empty key get the engine's own
// error first (there is no key to judge). A user name counts only when the
// password file verified it; certificate names are the verified
// certificate's common name and its DNS, e-mail and URI alternative names.
// A client id is chosen by the client, so rules on client ids are only as
// strong as the authentication in front of them.
//
// Topics (always enforced, with or without authentication): under
// "clients/" the second level names the owner of everything below it. A
// client owns the upper-case hex of its id and, when the id is a plain
// level (not empty; no '/', '+', '#', NUL; not "statestore"; not itself
// upper-case hex of even length), the id itself; no two ids own a common
// level, and "statestore" is the service's (package internal/protocol
// states the rule once for the runtime and the server). In the
// notification space (NotifyPrefix)
// a client owns only its hex id. One rule for everything a client sends —
// a PUBLISH (PUBACK 0x87), a will (checked at CONNECT, refused with
// CONNACK 0x87, and again when it fires) and a request's Response Topic
// (rule 5 above) — and one for everything it reads: a SUBSCRIBE whose
// filter could match another client's topics ("#", "clients/#",
// "clients/+", "+/other/…", the notification prefix with a wildcard or
// another id) gets SUBACK 0x87, and mochi runs the same check on every
// delivery. Topics outside "clients/" are not restricted, so a debugging
// "#" is refused but "statestore/#" is not.
package server
