package server

import "strings"

// notifySubPath is NotifyPrefix after "clients/statestore/": the levels a
// filter must spell out before the notification space's client level.
var notifySubPath = strings.TrimPrefix(NotifyPrefix, "clients/statestore/")

// subscribeAllowed reports whether client may subscribe to filter (mochi
// also asks it for each topic it delivers to the client). Under
// "clients/" a client owns only its own level: its id or the hex of it in
// either case (the response topics of the official SDKs), and in the
// notification space its own hex id (or plain id). A filter that could
// match another client's topics there ("#", "+/…", "clients/+/…",
// "clients/other/…", the notification prefix with a wildcard or another
// id) is refused. Shared subscriptions are judged by their filter. It runs
// on every delivery, so it allocates nothing.
func subscribeAllowed(client, filter string) bool {
	if rest, ok := strings.CutPrefix(filter, "$share/"); ok {
		_, f, ok := strings.Cut(rest, "/")
		if !ok {
			return true // mochi refuses it as invalid anyway
		}
		filter = f
	}
	first, rest, more := strings.Cut(filter, "/")
	switch first {
	case "#":
		return false
	case "clients", "+":
	default:
		return true
	}
	if !more {
		return true
	}
	second, rest, more := strings.Cut(rest, "/")
	switch {
	case second == "#":
		return false
	case second == "+":
		return !more // "clients/+" matches no client's subtree
	case isOwnLevel(client, second):
		return true
	case second != "statestore":
		return false
	}
	// clients/statestore/...: the notification space, or the subtree of a
	// client named "statestore" (nobody's to share).
	if !more {
		return true
	}
	for want := notifySubPath; ; {
		w, wrest, wmore := strings.Cut(want, "/")
		l, lrest, lmore := strings.Cut(rest, "/")
		if l != w {
			return false
		}
		if !lmore {
			return true // ends above the client level: matches no topic below
		}
		rest = lrest
		if !wmore {
			break
		}
		want = wrest
	}
	l, _, _ := strings.Cut(rest, "/")
	return isOwnLevel(client, l)
}

// isOwnLevel reports whether a topic level names client: the id itself or
// its hex encoding in either case.
func isOwnLevel(client, level string) bool {
	if level == client {
		return true
	}
	if len(level) != 2*len(client) || level == "" {
		return false
	}
	const lower, upper = "0123456789abcdef", "0123456789ABCDEF"
	for i := 0; i < len(client); i++ {
		hi, lo := level[2*i], level[2*i+1]
		c := client[i]
		if hi != lower[c>>4] && hi != upper[c>>4] || lo != lower[c&15] && lo != upper[c&15] {
			return false
		}
	}
	return true
}
