package server

import (
	"encoding/hex"
	"strings"
)

// notifyLevels are the levels of NotifyPrefix after "clients".
var notifyLevels = strings.Split(strings.TrimPrefix(NotifyPrefix, "clients/"), "/")

// subscribeAllowed reports whether client may subscribe to filter (or
// receive a message on a topic, which mochi checks with the same call).
// Under "clients/" a client owns only its own level: its id or the upper-
// or lower-case hex of it (response topics of the official SDKs), and in
// the notification space its own id level (hex, or the plain id). A
// filter that could match any other client's topics there ("#", "+/…",
// "clients/+/…", "clients/other/…", the notification prefix with a
// wildcard or another id) is refused. Shared subscriptions are judged by
// their filter.
func subscribeAllowed(client, filter string) bool {
	if strings.HasPrefix(filter, "$share/") {
		parts := strings.SplitN(filter, "/", 3)
		if len(parts) < 3 {
			return true // mochi refuses it as invalid anyway
		}
		filter = parts[2]
	}
	levels := strings.Split(filter, "/")
	switch levels[0] {
	case "#":
		return false
	case "clients", "+":
	default:
		return true
	}
	if len(levels) == 1 {
		return true
	}
	own := ownLevel(client)
	switch l := levels[1]; {
	case l == "#":
		return false
	case l == "+":
		return len(levels) == 2 // "clients/+" matches no client's subtree
	case own(l):
		return true
	case l != notifyLevels[0]:
		return false
	}
	// clients/statestore/...: the notification space, or the subtree of a
	// client named "statestore" (nobody's to share).
	rest := levels[2:]
	for i, want := range notifyLevels[1:] {
		if i >= len(rest) || rest[i] != want {
			return len(rest) == i // a filter ending early matches no topic below
		}
	}
	if n := len(notifyLevels) - 1; len(rest) > n {
		return own(rest[n])
	}
	return true
}

// ownLevel returns a test for the topic levels that name client.
func ownLevel(client string) func(string) bool {
	hx := hex.EncodeToString([]byte(client))
	return func(l string) bool {
		return l == client || strings.EqualFold(l, hx) && l != ""
	}
}
