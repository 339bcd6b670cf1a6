// Package engine is the state store's protocol engine: a deterministic
// state machine from decoded requests to RESP3 responses and KEYNOTIFY
// notifications. It knows nothing of MQTT: the server package decodes the
// PUBLISH (payload into Request.Args, user properties __ts and __ft into
// the Request) and publishes the Result and every Notification. The bytes
// it produces follow the wire contract (spec/wire-contract.md, §3–§8).
//
// # Model
//
// The store maps keys to an entry: value, version, fencing token (zero if
// none) and an optional deadline. A version is the engine's hybrid logical
// clock (runtime/hlc) after merging the request's __ts, so it is greater
// than that __ts and than every earlier version; GET returns the version
// the SET assigned. Every response that carries a __ts takes a fresh tick
// (merged with the request __ts when there is one) except a GET hit, which
// carries the key's version; a GET miss and every -ERR carry none
// (Result.Version is zero). A SET's ":-1" does carry one.
//
// Keys with a deadline sit in a min-heap ordered by deadline. Every
// request and every inspection (Lookup, Len, Keys...) first deletes the
// keys that are due, earliest first, so an expired key is never seen;
// Expire does the same and reports the next deadline, and Run calls it on
// a real timer, woken early when a request sets an earlier deadline.
// Expiry costs O(log n) per expired key; nothing scans the store.
//
// Notifications are delivered through Config.OnNotify synchronously under
// the engine's lock, in the order of the changes: NOTIFY SET VALUE v for
// a SET, NOTIFY DELETE for DEL, a successful VDEL and expiry, each carrying
// the key's new version (for a delete, the fresh tick the response also
// carries). The client that made the change is notified like any other
// watcher. Watchers of one key are notified in registration order.
//
// # Durability
//
// With Config.Journal the engine keeps some keys durable (Request.Persist,
// Config.PersistAll) without waiting for the disk under its lock: it hands
// each write's changes to the journal, numbered in order, applies them in
// memory at once and decides the next request on top of them, exactly as
// if they were on disk. What would reveal a change that is not durable
// yet, an answer about its key or a notification of it, carries the number
// to wait for (Result.Wait, Notification.Wait); Decide returns it, Handle
// waits itself. When the journal reports a transaction failed, Abandon
// undoes its changes and everything decided on top of them, and those
// requests are answered ErrPersistence. See Journal.
//
// # The clock
//
// Clients refuse a received __ts more than their maximum drift (one minute
// by default, Config.MaxDrift here) ahead of their own physical clock, so
// every version the engine hands out must stay within that, whatever its
// clients send: one version past it makes clients report applied writes
// as failed. The engine therefore accepts a request __ts or __ft at most
// MaxDrift - DriftMargin (55 s) ahead of Config.Now, and bounds the
// counter of a __ts (MaxCounter, CounterSlack) so that its clock never
// overflows into the next millisecond. After any sequence of accepted
// requests every version has Wall <= Now + MaxDrift - DriftMargin:
// clients with the default drift accept it as long as their clock is at
// most DriftMargin behind the engine's. Repeating a request at the edge of
// the window does not move the clock further. A stamp outside the window
// is answered ErrTimestampSkew (__ts) or ErrFencingTokenSkew (__ft), and
// changes nothing.
//
// # Check order
//
// Every command checks, and answers the first failure:
//
//  1. the verb: an empty request is ErrSyntax; a verb that is not exactly
//     SET, GET, DEL, VDEL, KEYNOTIFY or SCAN is ErrUnknownCommand;
//  2. arity: ErrWrongNumberOfArguments (SET needs at least key and value;
//     surplus SET options are option errors);
//  3. the key: ErrKeyLengthZero, then a key longer than MaxKeyBytes, a SET
//     value longer than MaxValueBytes or a SCAN pattern longer than
//     MaxScanPatternBytes: ErrQuotaExceeded;
//  4. options (SET's NX/NEX/PX, KEYNOTIFY's STOP, SCAN's token): ErrSyntax;
//  5. timestamps: SET without __ts is ErrMissingTimestamp; an unparsable
//     __ts, then __ft, is ErrMalformedTimestamp; then a __ts, then a __ft,
//     outside the accept window (see The clock) is ErrTimestampSkew or
//     ErrFencingTokenSkew;
//  6. fencing (SET, DEL, VDEL of an existing fenced key):
//     ErrFencingTokenRequired, then ErrFencingTokenLowerVersion;
//  7. the condition: SET NX/NEX answers ":-1", VDEL with another value ":-1";
//  8. quotas: SET beyond MaxKeys/MaxBytes, a new KEYNOTIFY registration
//     beyond MaxWatchesPerClient: ErrQuotaExceeded.
//
// A refused request changes nothing: no key, no version, no notification.
//
// # Choices the wire contract leaves open
//
//   - Verbs and options are case-sensitive, upper case only, as on the real
//     service: "set" is ErrUnknownCommand, "nx" and "stop" are ErrSyntax.
//   - SET options may come in any order but each only once; NX with NEX,
//     a repeated option, an unknown option, PX without a value, and a PX
//     that is not 1..9223372036854 in plain decimal digits are all "syntax
//     error".
//   - __ts is optional on every command but SET; when present it is checked
//     (parse, window) on every command. A write (SET, DEL, VDEL) merges it
//     into the clock; a read (GET, KEYNOTIFY, SCAN) only when it is not
//     ahead of the physical clock. __ft is only read by SET, DEL and VDEL;
//     GET, KEYNOTIFY and SCAN ignore it, even a malformed one.
//   - Fencing comes before the condition: an unfenced SET NX on a fenced key
//     is refused with the fencing error rather than answered ":-1"; a
//     failed condition is answered ":-1" even when the quota is full.
//   - An equal __ft is accepted; a SET keeps the larger of the stored and
//     the request token; an older __ft on an unfenced key is simply stored.
//     An expired or deleted key loses its token.
//   - MaxBytes counts key and value bytes; MaxKeys counts keys. Overwriting
//     an existing key never counts against MaxKeys.
//   - The contract makes a counter overflow an error; requests cannot cause
//     one (see The clock), and one caused by Put moves the clock one
//     millisecond ahead instead of failing.
//   - KEYNOTIFY on an absent key registers; registering twice is one
//     registration; STOP of someone else's registration answers ":0".
//   - ErrNotAuthorized is defined but never produced: the engine has no
//     authorization rules (the server's are applied before it).
//   - SCAN (beta) lists matching keys in byte-wise order, at most 100 per
//     page, with Redis-style globs ('*' crosses '/'; "[!a]" and "[^a]"
//     both negate). Keys are kept in an ordered index, so a request seeks
//     to its cursor (O(log n)) instead of sorting, and it examines at most
//     4,096 keys, fewer when matching them would cost more than 2^20 word
//     operations (at most (len(key)+1) × (ceil((pattern tokens+1)/64)+1)
//     each; the first key is always examined). A pattern longer than
//     MaxScanPatternBytes is refused. So a page may be short, even empty,
//     and still carry a token. A pattern with a literal prefix visits only
//     the keys with that prefix. The token is the hex form of the last key
//     examined, so paging survives concurrent changes: a key present for
//     the whole walk is listed exactly once, keys added behind the cursor
//     are skipped, none is listed twice.
//
// # Snapshots
//
// Export takes every key (value, version, fencing token, time left,
// durability) and the clock at one instant; Import loads such a Snapshot
// all or nothing: every item and the resulting store are checked against
// the limits, quotas and accept window first, and the first problem is
// returned (an *ItemError names the item) with nothing changed. Imported
// keys keep their versions and tokens, expire their TTL after the import,
// and the clock moves past everything the snapshot holds; watchers are
// notified with a fresh version.
//
// Payloads of fixed answers and the key/payload of the notifications of one
// change are shared read-only buffers: a caller publishes them and must not
// modify them.
package engine
