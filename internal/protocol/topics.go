package protocol

import (
	"strings"
	"unicode/utf8"
)

// ServiceID is the state store's fixed service identifier in its topics.
const ServiceID = "FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8"

// Topic names of the state store.
const (
	// ServiceLevel is the level under ClientsRoot that only the service
	// owns; no client id owns it, even a client named "statestore". It is
	// also the service's name in every other topic.
	ServiceLevel = "statestore"
	// RequestTopic is where clients publish state store requests.
	RequestTopic = ServiceLevel + "/v1/" + ServiceID + "/command/invoke"
	// ClientsRoot starts every client-owned topic.
	ClientsRoot = "clients/"
	// NotifyPrefix starts every notification topic, followed by
	// "/HEX(clientId)/command/notify/HEX(key)".
	NotifyPrefix = ClientsRoot + ServiceLevel + "/v1/" + ServiceID
	// ResponseSuffix follows a client's own level (see OwnLevel) in the
	// response topic of the ssgen runtime, the Rust SDK's layout:
	// ClientsRoot + level + ResponseSuffix.
	ResponseSuffix = "/services/" + ServiceLevel + "/v1/" + ServiceID + "/command/invoke/response"
	// notifyInfix separates the client and the key level of a
	// notification topic.
	notifyInfix = "/command/notify/"
)

// ResponseTopic is the ssgen runtime's response topic under level, a
// level its client owns (OwnLevel), or a broker's placeholder for it.
func ResponseTopic(level string) string { return ClientsRoot + level + ResponseSuffix }

// NotifyTopic is the topic of the notifications for key sent to clientID.
func NotifyTopic(clientID string, key []byte) string {
	b := make([]byte, 0, len(NotifyPrefix)+1+2*len(clientID)+len(notifyInfix)+2*len(key))
	b = appendNotifyClientPrefix(b, clientID)
	b = AppendUpperHex(b, string(key))
	return string(b)
}

// NotifyClientPrefix is the notification topic of clientID without its
// last level, the upper-case hex of the key.
func NotifyClientPrefix(clientID string) string {
	return string(appendNotifyClientPrefix(nil, clientID))
}

func appendNotifyClientPrefix(b []byte, clientID string) []byte {
	b = append(b, NotifyPrefix...)
	b = append(b, '/')
	b = AppendUpperHex(b, clientID)
	return append(b, notifyInfix...)
}

const hexDigits = "0123456789ABCDEF"

// AppendUpperHex appends the upper-case hex of s's bytes to dst.
func AppendUpperHex(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, hexDigits[s[i]>>4], hexDigits[s[i]&15])
	}
	return dst
}

// OwnLevel is the level under ClientsRoot that a client uses for its own
// topics: its id when that is a plain level, else the hex of the id. For an
// id the broker accepts (ValidClientID), both are owned by the client and
// by no other.
func OwnLevel(clientID string) string {
	if PlainLevel(clientID) {
		return clientID
	}
	return string(AppendUpperHex(nil, clientID))
}

// ValidClientID reports whether the embedded broker accepts id as a client
// id: not empty, valid UTF-8, and no control character (U+0000 to U+001F,
// U+007F to U+009F). MQTT forbids U+0000 and invalid UTF-8, and lets a
// server refuse the control characters; refusing them keeps ids printable
// in logs and leaves more upper-case hex ids plain levels (see PlainLevel).
// An id that is not valid owns no level.
func ValidClientID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRuneInString(id[i:])
		if r == utf8.RuneError && n == 1 || !idRune(r) {
			return false
		}
		i += n
	}
	return true
}

func idRune(r rune) bool { return r >= 0x20 && (r < 0x7F || r > 0x9F) }

// PlainLevel reports whether the id itself is a level its client owns: a
// valid id (ValidClientID) that is a single topic level (no '/', '+',
// '#'), is not "statestore", and is not the upper-case hex of another
// valid id. "A4C138F0E1D2" is plain (its decoding is not UTF-8), and so is
// "00124B001CAF8E21" (its decoding holds NUL); "4142" is not (it is the hex
// of "AB").
func PlainLevel(id string) bool {
	return ValidClientID(id) && id != ServiceLevel && !strings.ContainsAny(id, "/+#") && !isHexOfValidID(id)
}

// isHexOfValidID reports whether s is the upper-case hex of an id the
// broker accepts: an even number of the characters 0-9 and A-F whose
// decoding passes ValidClientID. It decodes as it goes and allocates
// nothing.
func isHexOfValidID(s string) bool {
	if len(s) == 0 || len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'A' || c > 'F') {
			return false
		}
	}
	n := len(s) / 2
	var buf [utf8.UTFMax]byte
	for i := 0; i < n; {
		c := hexByte(s, i)
		w := 1
		switch {
		case c < utf8.RuneSelf:
		case c >= 0xC2 && c <= 0xDF:
			w = 2
		case c >= 0xE0 && c <= 0xEF:
			w = 3
		case c >= 0xF0 && c <= 0xF4:
			w = 4
		default:
			return false
		}
		if i+w > n {
			return false
		}
		for j := range w {
			buf[j] = hexByte(s, i+j)
		}
		r, size := utf8.DecodeRune(buf[:w])
		if size != w || !idRune(r) {
			return false
		}
		i += w
	}
	return true
}

// hexByte decodes the i-th byte of s, upper-case hex checked by the caller.
func hexByte(s string, i int) byte { return unhex(s[2*i])<<4 | unhex(s[2*i+1]) }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// OwnsLevel reports whether client owns the level under ClientsRoot: the
// upper-case hex of its id, and the id itself when that is a plain level.
// An id the broker refuses owns nothing. For two different ids, no level is
// owned by both. It allocates nothing.
func OwnsLevel(client, level string) bool {
	if level == "" || !ValidClientID(client) {
		return false
	}
	return isHexOf(level, client) || level == client && PlainLevel(client)
}

// OwnsNotifyLevel reports whether client owns the client level of the
// notification space (the level after NotifyPrefix): only its hex, since
// the service writes nothing else there.
func OwnsNotifyLevel(client, level string) bool {
	return level != "" && ValidClientID(client) && isHexOf(level, client)
}

// isHexOf reports whether level is the upper-case hex of id.
func isHexOf(level, id string) bool {
	if len(level) != 2*len(id) {
		return false
	}
	for i := 0; i < len(id); i++ {
		if level[2*i] != hexDigits[id[i]>>4] || level[2*i+1] != hexDigits[id[i]&15] {
			return false
		}
	}
	return true
}

// TopicOwner splits a topic under ClientsRoot into its owner level; ok is
// false for a topic outside that space ("clients" alone included).
func TopicOwner(topic string) (level string, ok bool) {
	rest, ok := strings.CutPrefix(topic, ClientsRoot)
	if !ok {
		return "", false
	}
	level, _, _ = strings.Cut(rest, "/")
	return level, true
}

// The service's paths below a client's level, one per response-topic
// layout of the official SDKs: the Go and .NET SDKs answer under
// "clients/{level}/statestore/...", the Rust SDK (and ssgen's runtime)
// under "clients/{level}/services/statestore/...". Every topic that starts
// with one of them, whatever follows, is the state store's.
var servicePaths = [...]string{ServiceLevel, "services/" + ServiceLevel}

// ServiceOwned reports whether topic is one the state store writes and
// only it may write: anything under the service's own level
// "clients/statestore/" (the notification space), and any topic under a
// client's level that continues with a service path (servicePaths).
// Everything else under ClientsRoot is ordinary MQTT.
func ServiceOwned(topic string) bool {
	rest, ok := strings.CutPrefix(topic, ClientsRoot)
	if !ok {
		return false
	}
	level, rest, more := strings.Cut(rest, "/")
	return level == ServiceLevel || mayMatchServicePath(rest, more)
}

// MayPublish reports whether client may publish (a PUBLISH, or a will) on
// topic. Only the service writes what ServiceOwned names, so a client may
// publish there only under a level it owns (its own response topic, where
// it fools no one but itself), never under the service's level. Every
// other topic, under ClientsRoot or not, is left to the broker's other
// rules.
func MayPublish(client, topic string) bool {
	if !ServiceOwned(topic) {
		return true
	}
	level, _ := TopicOwner(topic)
	return level != ServiceLevel && OwnsLevel(client, level)
}

// MayBeAnsweredOn reports whether the service may answer a state store
// request of client on topic, its Response Topic: outside ClientsRoot (the
// other checks of a response topic aside) yes, inside it only below a
// level the client owns, whatever the path below. The service never writes
// into another client's space on a caller's behalf.
func MayBeAnsweredOn(client, topic string) bool {
	level, inClients := TopicOwner(topic)
	return !inClients || OwnsLevel(client, level)
}

const sharePrefix = "$share/"

// notifySubPath is NotifyPrefix after "clients/statestore/": the levels a
// filter must spell out before the notification space's client level.
const notifySubPath = "v1/" + ServiceID

// MaySubscribe reports whether client may subscribe to filter; the
// embedded broker also asks it for each topic it delivers to the client,
// so it is the one read rule. A filter that could match a topic the state
// store writes for another client (ServiceOwned) is refused: "#",
// "clients/#", "clients/+/#", "clients/other/statestore/…", the
// notification prefix with a wildcard or another client's hex level. In
// the service's level a filter must spell out the notification prefix and
// then the client's own hex id (OwnsNotifyLevel). Everything else is
// allowed: "clients/other/rpc/…" is ordinary MQTT. Shared subscriptions
// are judged by their filter. It allocates nothing.
func MaySubscribe(client, filter string) bool {
	if len(filter) > len(sharePrefix) && strings.EqualFold(filter[:len(sharePrefix)], sharePrefix) { // mochi ignores its case
		_, f, ok := strings.Cut(filter[len(sharePrefix):], "/")
		if !ok {
			return true // refused as invalid by the broker anyway
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
	level, rest, more := strings.Cut(rest, "/")
	switch {
	case level == "#":
		return false
	case level == ServiceLevel:
		return notifyFilterAllowed(client, rest, more)
	case level == "+":
		return !mayMatchForeignNotification(client, rest, more) && !mayMatchServicePath(rest, more)
	case OwnsLevel(client, level):
		return true
	}
	return !mayMatchServicePath(rest, more)
}

// notifyFilterAllowed judges a filter below "clients/statestore/" (rest;
// none when !more), the service's own level where it publishes nothing but
// notifications: the filter must spell out the notification prefix and
// may then name only the client's own hex level, or end above it.
func notifyFilterAllowed(client, rest string, more bool) bool {
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
	return OwnsNotifyLevel(client, l)
}

// mayMatchForeignNotification reports whether a filter whose owner level
// is '+' (rest follows it; none when !more) could match a notification
// for another client.
func mayMatchForeignNotification(client, rest string, more bool) bool {
	rest, more, covered, hash := coverPrefix(rest, more, notifySubPath)
	switch {
	case !covered:
		return false
	case hash:
		return true
	case !more:
		return false // ends above the client level: nothing is published there
	}
	l, _, _ := strings.Cut(rest, "/")
	return !OwnsNotifyLevel(client, l)
}

// mayMatchServicePath reports whether the filter levels after an owner
// level (rest; none when !more) could match a topic that starts with one
// of the service paths.
func mayMatchServicePath(rest string, more bool) bool {
	for _, p := range servicePaths {
		if _, _, covered, _ := coverPrefix(rest, more, p); covered {
			return true
		}
	}
	return false
}

// coverPrefix walks the filter levels f (none when !more) along the
// concrete levels of prefix. covered reports whether the filter can match
// a topic that starts with all of prefix's levels; then rest and restMore
// are the filter's levels after them, and hash says that the filter met
// '#' on the way (it matches every such topic).
func coverPrefix(f string, more bool, prefix string) (rest string, restMore, covered, hash bool) {
	for {
		if !more {
			return "", false, false, false
		}
		l, fr, fm := strings.Cut(f, "/")
		if l == "#" {
			return "", false, true, true
		}
		p, pr, pm := strings.Cut(prefix, "/")
		if l != "+" && l != p {
			return "", false, false, false
		}
		f, more = fr, fm
		if !pm {
			return f, more, true, false
		}
		prefix = pr
	}
}
