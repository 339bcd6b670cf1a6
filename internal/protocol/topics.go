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
// topics: its id when that is a plain level, else the hex of the id. Both
// are always owned by the client and by no other.
func OwnLevel(clientID string) string {
	if PlainLevel(clientID) {
		return clientID
	}
	return string(AppendUpperHex(nil, clientID))
}

// PlainLevel reports whether the id itself is a level its client owns.
func PlainLevel(id string) bool {
	return id != "" && id != ServiceLevel && !isUpperHex(id) &&
		!strings.ContainsAny(id, "/+#\x00") && utf8.ValidString(id)
}

// isUpperHex reports whether s could be the HEX of some id: an even number
// of the characters 0-9 and A-F.
func isUpperHex(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// OwnsLevel reports whether client owns the level under ClientsRoot. For
// two different ids, no level is owned by both. It allocates nothing.
func OwnsLevel(client, level string) bool {
	return level != "" && (isHexOf(level, client) || level == client && PlainLevel(client))
}

// OwnsNotifyLevel reports whether client owns the client level of the
// notification space (the level after NotifyPrefix): only its hex, since
// the service writes nothing else there.
func OwnsNotifyLevel(client, level string) bool {
	return level != "" && isHexOf(level, client)
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

// MayPublish reports whether client may publish (a PUBLISH, a will, or a
// request's Response Topic the service would publish to) on topic: outside
// ClientsRoot anything, inside it only below a level the client owns. The
// service's own level, notifications included, is never a client's.
func MayPublish(client, topic string) bool {
	level, inClients := TopicOwner(topic)
	return !inClients || OwnsLevel(client, level)
}
