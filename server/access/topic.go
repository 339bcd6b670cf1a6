package access

import "github.com/ssgen/ssgen/internal/protocol"

// subscribeAllowed reports whether client may subscribe to filter; mochi
// also asks it for each topic it delivers to the client, so it is the one
// read rule. The rule is protocol.MaySubscribe: a filter that could match
// what the state store writes for another client (its notifications, its
// answers on another client's response topic) is refused; the rest of
// "clients/" is ordinary MQTT. It allocates nothing.
func subscribeAllowed(client, filter string) bool {
	return protocol.MaySubscribe(client, filter)
}
