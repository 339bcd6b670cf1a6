// Package runtime is the client of the Azure IoT Operations MQTT broker's
// state store: a key-value store spoken as MQTT 5 request/response. The
// code ssgen generates calls it; it is also usable on its own, with keys
// and values as bytes.
//
// # Connecting
//
// Dial connects with a Config, built by hand, from a broker URL (FromURL:
// mqtt://host:port or mqtts://host:port) or from the AIO_* environment
// variables the official SDKs read (FromEnv). TLS with a private CA and a
// client certificate, user name and password file, and Kubernetes service
// account tokens (MQTT enhanced authentication, method K8S-SAT) are
// supported; password and token files are re-read on every connect, so
// rotated secrets apply without a restart.
//
//	cfg, err := runtime.FromEnv()
//	c, err := runtime.Dial(ctx, cfg)
//	defer c.Close()
//
// The Client owns its reconnect loop: after a lost connection it waits a
// capped, jittered exponential backoff and resumes the MQTT session (Clean
// Start false, Session Expiry from Config). A connection that drops soon
// after being made (another process taking over the same client id, a
// broker that accepts and then kicks) does not reset the backoff, so two
// twins slow down instead of storming. If the broker lost the session the
// client subscribes again. Every reconnect re-registers the watched keys.
//
// # Requests
//
// Get, Set, Del and VDel are the state store's commands. Each request
// carries the envelope of the official SDKs (QoS 1, 16 random bytes of
// correlation data, Message Expiry equal to the time left rounded up to
// seconds, __srcId, __ts, __protVer, $partition, $high_priority, and __ft /
// aio-persistence when asked) and is bounded by the context's deadline or
// Config.Timeout, whichever is first. The number in flight is bounded by
// the broker's Receive Maximum; more calls queue.
//
// Outcomes are values usable with errors.Is and errors.As:
//
//   - ErrNotFound (GET miss), ErrConditionNotMet (a failed NX/NEX, or a VDEL
//     that found another value): answers, not failures.
//   - One sentinel per "-ERR" text of the service (ErrFencingTokenRequired,
//     ErrFencingTokenLowerVersion, ErrQuotaExceeded, ErrNotAuthorized, ...);
//     the error itself is a *ServiceError holding the text, which also
//     carries texts this package does not know.
//   - *RPCError: the response envelope's status was not 200.
//   - *ProtocolError (ErrProtocol): the response broke the wire contract;
//     ErrInvalidVersion when it lacked the version it must hand back (see
//     Versions and fencing). hlc.ErrDrift: its __ts was too far ahead.
//   - *BrokerError: the broker refused the request itself (a PUBACK reason
//     code of 0x80 or more, at once rather than at the timeout; 0x87, an
//     ACL denial, also matches ErrNotAuthorized).
//   - ErrConnectionLost: the connection dropped while the request was in
//     flight. The call fails at once rather than at its timeout; whether
//     the service applied the request is unknown, but it is never sent
//     again later (the client forgets its side of the MQTT session when a
//     connection drops, so nothing is replayed behind newer writes).
//   - ErrTimeout (a *TimeoutError, which also matches
//     context.DeadlineExceeded); a cancelled context gives context.Canceled.
//   - ErrInvalidArgument: refused before sending (empty key, negative TTL,
//     or a *PacketTooLargeError: larger than the broker's Maximum Packet
//     Size, which would make the broker drop the connection).
//   - ErrClosed: the Client was closed.
//
// A request the broker acknowledged with "no matching subscribers" (PUBACK
// 0x10: no state store was listening, as when an external one is
// reattaching) reached nobody, so it is sent again until its deadline.
// While the client is reconnecting, new calls wait for the connection
// within their deadline.
//
// IsRetryable tells the transport failures (lost connection, timeout)
// from the service's answers.
//
// # Versions and fencing
//
// Every request's __ts comes from one hybrid logical clock per client
// (Clock, node id = client id), and every __ts received is merged into it;
// a received __ts more than Config.MaxDrift (one minute by default) ahead
// of the local physical clock fails the request (hlc.ErrDrift) and is not
// merged. The ssgen server keeps every version it hands out within
// MaxDrift - 5 s of its own clock whatever its clients send, so a client
// with the default MaxDrift and a clock at most 5 s behind the server's
// never sees this error; a smaller MaxDrift gives up that guarantee.
//
// A reply that hands back a version must carry it: a stored Set, a Get
// hit, a Del or VDel that answered deleted or absent. Without a __ts (or
// with an unparsable one, or the zero clock) the call fails with a
// *ProtocolError matching ErrInvalidVersion and ErrProtocol, never
// returning a zero version; for a Set, Del or VDel the service may have
// applied the change. A Get miss carries no __ts (that is how the service
// says "absent"), and a failed condition (ErrConditionNotMet) or a
// KeyNotify needs none; a __ts they do carry is checked and merged all the
// same.
//
// Set returns the version the service gave the value. A lock is a key set
// with IfNotExistsOrEqual and a TTL; the version of that Set is the fencing
// token to pass in SetOptions and DelOptions of the keys it protects, so a
// lease never holds a zero token.
//
// # Watching
//
// Watch is an iterator over the changes of one key:
//
//	for ev, err := range c.Watch(ctx, []byte("thermostats/kitchen/setPoint")) {
//		if err != nil { ... }
//		switch ev.Kind {
//		case runtime.EventSet:    // ev.Value, ev.Version
//		case runtime.EventDelete: // deleted or expired
//		case runtime.EventResync: // changes may have been missed; ev is the current state
//		}
//	}
//
// Watchers of one key share one KEYNOTIFY registration, made when the
// first starts iterating and removed (KEYNOTIFY STOP) when the last one
// stops. Each watcher has a bounded buffer (Config.WatchBuffer): one that
// does not keep up gets a single EventResync carrying the key's current
// value instead of the events it missed, and never slows the connection
// or the other watchers down. After every reconnect the registrations are
// renewed first and then every watcher gets an EventResync, so no change
// goes unnoticed. A notification whose __ts is missing, malformed, the
// zero clock or more than MaxDrift ahead is not delivered: it is logged,
// counted in Stats().RefusedNotifications, and the key's watchers get an
// EventResync instead. The iteration ends when ctx ends or the Client
// closes.
// WatchWith with Current set starts with an EventResync of the key's state
// read once the registration is live: a known starting point, and no gap
// before the first change.
//
// KeyNotify and KeyNotifyStop are the raw commands; Watch manages the
// registrations itself, so do not mix the two on one key.
//
// # Typed keys, locks and compare-and-set
//
// Generated code returns a Key[T] per key (NewKey): Get, Set, SetIfAbsent,
// Delete and DeleteIfEqual with the key's codec (runtime/codec), default
// TTL and guard Lock; Watch and WatchWith yield KeyEvent[T] with decoded
// values (WatchOptions.Current starts from the key's state, as for bytes).
// A Lock (NewLock) is held through a Lease that renews itself; writes to a
// key guarded by the lock carry the lease's fencing token while this client
// holds it. What a Client holds and the turns its goroutines take live on
// that Client; no state is shared between Clients of one process.
//
// The state store compares values only in SET NX/NEX and VDEL, so the
// read-compare-write operations of a guarded key run under its guard's
// lease and write with its token:
//
//   - SetIfVersion(ctx, v, version) writes only if the key's version is
//     still the one the caller read: of several callers racing from one
//     version exactly one wins, even when they write the value they read.
//     The zero version means "absent" (SET NX, also on unguarded keys);
//     any other version on an unguarded key fails with ErrNotGuarded, since
//     nothing could keep a write between the read and the write out.
//   - CompareAndSet(ctx, old, new) compares encoded values, with the ABA
//     problem of any value comparison.
//   - Update(ctx, fn) writes fn's result and reports (changed, version);
//     fn returning ErrSkipUpdate leaves the key alone: nothing is written
//     and no watcher is notified.
//
// # Reading many keys
//
// The service has no multi-key read. GetMany (bytes), GetKeys (typed keys)
// and GetEach (behind the generated Get<Group><Key>s) send one GET per key
// over the Client's one connection, at most GetManyOptions.Concurrency
// (DefaultGetManyConcurrency, 32) at a time, and answer in input order:
//
//   - a duplicate key is read once, each position getting a copy;
//   - each position has its own error (ErrNotFound for a missing key, a
//     *codec.DecodeError for an undecodable value); the call's error is a
//     *GetManyError when any position failed, and absence is not a failure;
//   - a GET that failed in transport is sent again up to
//     GetManyOptions.Retries times (DefaultGetManyRetries, 2);
//   - GetManyOptions.KeyTimeout (Config.Timeout by default) bounds each
//     attempt from when it is sent; ctx bounds the whole call, and keys not
//     sent when it ends get its error without being sent;
//   - each value is as of its own GET: the results are not a snapshot.
//
// # Listing
//
// ListKeys lists the keys matching a glob with the service's SCAN verb
// (beta on the real service), one page per request, as a range-over-func
// iterator. Listing.Cursor says where to resume, also after a restart
// (ListOptions.From). Each key is yielded once per listing; every key that
// exists for the whole listing is yielded, keys created or deleted during
// it may or may not be. A failed page is asked for again from the same
// cursor; a continuation token the service repeats ends the listing with a
// *ProtocolError instead of looping.
//
// ListGroup, with a Template (a group's path and the paths of its keys),
// lists a group's instances: each listed key is read back into the
// group's typed parameters, keys that do not fit are skipped and each
// instance is yielded once. Generated List<Group>s methods call it.
//
// # Watching a pattern
//
// WatchPattern watches every key matching a glob: an EventResync per key
// listed (the initial state), then each key's changes through the same
// per-key registrations as Watch, and an EventSet for each key found
// later, at once for keys this client sets and otherwise at a rescan
// (PatternWatchOptions.Rescan, every DefaultRescan; after each reconnect;
// on Trigger). A deleted key stops being watched until it is found again.
// A registration the service refuses (ErrQuotaExceeded: each key takes
// one of the per-client watches) ends the iteration with that error.
// WatchGroup, behind the generated Watch<Group>s, adds the group's
// parameters and handle to each event.
//
// # Observability
//
// Config.Logger receives connection events and anomalies (nothing is
// logged by default, nothing is ever printed); Stats returns counters of
// requests, errors, reconnects, requests in flight, watchers and refused
// notifications.
//
// # Compared with the official Go SDK
//
// The Azure IoT Operations Go SDK (github.com/Azure/iot-operations-sdks/go,
// package services/statestore) speaks the same protocol, and this client
// is interchangeable with it on the wire: the same request topic, payloads,
// user properties and expectations of the responses; both can work on the
// same keys at the same time. Where they differ:
//
//   - Notifications: the SDK never subscribes to its notification topic and
//     relies on the real broker delivering them anyway (wire contract §5);
//     this client subscribes, as the protocol article says, so it also
//     works against brokers that only route by subscription (mosquitto, a
//     test broker).
//   - Slow consumers: the SDK hands each incoming message to its own
//     goroutine, so callers can see a key's notifications out of order, and
//     its source sends a notification to the key's watcher channels one
//     after another, waiting on each; here delivery is in order per
//     watcher, never waits, and a watcher that falls behind gets one Resync
//     instead of holding up the others.
//   - Reconnects: both renew their KEYNOTIFY registrations after a
//     reconnect and report the current value; the SDK's session client
//     stops for good when the broker lost the session (CONNACK Session
//     Present 0), while this client subscribes again and carries on.
//   - Failures: a lost connection fails requests in flight at once instead
//     of at their timeout; a request no state store received (PUBACK "no
//     matching subscribers") is sent again; every error is a typed value.
//   - Response topic: the Rust SDK's layout
//     (clients/{clientId}/services/statestore/v1/…/command/invoke/response).
package runtime
