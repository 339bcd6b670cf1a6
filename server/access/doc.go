// Package access decides who may connect to the embedded broker and what
// they may do: TLS (LoadTLS), password authentication (Passwords), the
// authorization rules of the state store's keys (Policy, in the real
// broker's BrokerAuthorization format), and the one topic rule that
// protects what the state store writes (protocol.MayPublish for what a
// client sends, the topic rule (topic.go) for what it may read).
//
// Hook is the embedded broker's only authentication and ACL hook: it
// checks client ids and identities at CONNECT (a session is taken over
// only by the same identity), applies the topic rule to PUBLISH,
// SUBSCRIBE, wills and every delivery, and tells the server each client's
// Identity, whose Grants decide its requests. Security gathers the
// settings; package server takes them in Options.Security and keeps the
// names it had for them (Security, Policy, Passwords, LoadTLS, …).
//
// Files: hook.go (the hook), security.go (the settings), passwords.go,
// policy.go (authorization rules and grants), tls.go, topic.go (the topic
// rule for subscriptions).
package access
