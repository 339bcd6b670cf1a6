package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/ssgen/ssgen/internal/protocol"
)

// RequestTopic is where every state store request is published.
const RequestTopic = protocol.RequestTopic

// ResponseTopic is the topic this client receives its responses on (the
// Rust SDK's layout) under the client's own level: its id, or the hex of
// the id when the id cannot be a level only it owns (one with '/', '+',
// '#', "statestore", or the upper-case hex of another valid id, such as
// "4142" for "AB"; see protocol.PlainLevel). The server refuses a response
// topic under a level the client does not own.
func ResponseTopic(clientID string) string {
	return protocol.ResponseTopic(protocol.OwnLevel(clientID))
}

// NotifyTopicPrefix is the notification topic of clientID without its last
// level, the upper-case hex of the key.
func NotifyTopicPrefix(clientID string) string {
	return protocol.NotifyClientPrefix(clientID)
}

// NotifyTopic is the topic on which clientID receives notifications for key.
func NotifyTopic(clientID string, key []byte) string {
	return protocol.NotifyTopic(clientID, key)
}

func upperHex(b []byte) string { return string(protocol.AppendUpperHex(nil, string(b))) }

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
