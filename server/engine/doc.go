// Package engine is the state store's protocol engine: a deterministic
// state machine from decoded requests to RESP3 responses and KEYNOTIFY
// notifications. It knows nothing of MQTT; the server package feeds it
// from a broker. See doc comment details below (being written).
package engine
