package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// serviceID is the state store's fixed service identifier in its topics.
const serviceID = "FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8"

// RequestTopic is where every state store request is published.
const RequestTopic = "statestore/v1/" + serviceID + "/command/invoke"

// notifyRoot is the prefix of every notification topic; no response topic
// may start with it (the real service disconnects such a client).
const notifyRoot = "clients/statestore/v1/" + serviceID + "/"

// ResponseTopic is the topic this client receives its responses on (the
// Rust SDK's layout). A client id that cannot stand in a topic level as is
// goes in hex.
func ResponseTopic(clientID string) string {
	return "clients/" + topicSafe(clientID) + "/services/statestore/v1/" + serviceID + "/command/invoke/response"
}

// NotifyTopicPrefix is the notification topic of clientID without its last
// level, the upper-case hex of the key.
func NotifyTopicPrefix(clientID string) string {
	return notifyRoot + upperHex([]byte(clientID)) + "/command/notify/"
}

// NotifyTopic is the topic on which clientID receives notifications for key.
func NotifyTopic(clientID string, key []byte) string {
	return NotifyTopicPrefix(clientID) + upperHex(key)
}

// topicSafe returns id if it can be one topic level, else its hex form.
func topicSafe(id string) string {
	if id == "" || !utf8.ValidString(id) || strings.ContainsAny(id, "/+#\x00") {
		return upperHex([]byte(id))
	}
	return id
}

func upperHex(b []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i] = digits[c>>4]
		out[2*i+1] = digits[c&0xF]
	}
	return string(out)
}

// decodeHex accepts upper or lower case, as a lenient reader should.
func decodeHex(s string) ([]byte, bool) {
	b, err := hex.DecodeString(s)
	return b, err == nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// nodeID makes a client id usable as an HLC node id, which cannot hold ':'.
func nodeID(clientID string) string {
	if strings.IndexByte(clientID, ':') >= 0 {
		return upperHex([]byte(clientID))
	}
	return clientID
}
