// Package interop checks ssgen's state store server against the official
// Azure IoT Operations Go SDK: its MQTT session client
// (github.com/Azure/iot-operations-sdks/go/mqtt), state store client
// (.../go/services/statestore) and leased lock (.../go/services/leasedlock).
//
// It is a module of its own so that the SDK and its dependencies stay out
// of the main module. The tests start the server embedded on 127.0.0.1
// port 0 with a fake engine clock and talk to it only through the SDK; see
// README.md for the pinned versions and how to run them.
package interop
