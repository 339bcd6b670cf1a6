package server

import (
	"strings"

	"github.com/ssgen/ssgen/internal/protocol"
)

// notifySubPath is NotifyPrefix after "clients/statestore/": the levels a
// filter must spell out before the notification space's client level.
var notifySubPath = strings.TrimPrefix(NotifyPrefix, protocol.ClientsRoot+protocol.ServiceLevel+"/")

// subscribeAllowed reports whether client may subscribe to filter; mochi
// also asks it for each topic it delivers to the client, so it is the one
// read rule. Under "clients/" a client may read only below a level it owns
// (protocol.OwnsLevel), and in the notification space only below its own
// hex id (protocol.OwnsNotifyLevel). A filter that could match another
// client's topics there ("#", "+/…", "clients/+", "clients/other/…", the
// notification prefix with a wildcard or another id) is refused. Shared
// subscriptions are judged by their filter. It allocates nothing.
func subscribeAllowed(client, filter string) bool {
	if len(filter) > len("$share/") && strings.EqualFold(filter[:len("$share/")], "$share/") { // mochi ignores its case
		_, f, ok := strings.Cut(filter[len("$share/"):], "/")
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
	case second == "#" || second == "+":
		return false
	case protocol.OwnsLevel(client, second):
		return true
	case second != protocol.ServiceLevel:
		return false
	}
	// clients/statestore/...: the service's own space.
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
			return true // ends above the client level: nothing is published there
		}
		rest = lrest
		if !wmore {
			break
		}
		want = wrest
	}
	l, _, _ := strings.Cut(rest, "/")
	return protocol.OwnsNotifyLevel(client, l)
}
