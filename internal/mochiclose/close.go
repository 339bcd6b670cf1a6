// Package mochiclose stops a mochi MQTT server without the shutdown
// deadlock of mochi v2.7.9.
//
// mochi's Server.Close disconnects each listener's clients through
// Clients.GetByListener, which takes the client map's read lock twice (once
// itself, once in Clients.Len). A client whose connection ends at that
// moment asks for the write lock (to remove itself from the map) in between;
// Go's RWMutex then blocks the second read lock behind that writer, and the
// writer behind the first read lock: Close never returns. Close here
// disconnects the clients itself, under a single read lock, from inside the
// listeners' close step; listeners run that step only once, so the server's
// own Close skips GetByListener.
package mochiclose

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Close disconnects the clients of srv's listeners, closes the listeners,
// waits for the clients' connections to end and stops srv. Inline clients
// (on no listener) are left alone, as mochi leaves them.
func Close(srv *mqtt.Server) error {
	srv.Listeners.CloseAll(func(listener string) { disconnect(srv, listener) })
	return srv.Close()
}

// disconnect ends the open connections of listener's clients. GetAll takes
// the client map's read lock once and returns a copy.
func disconnect(srv *mqtt.Server, listener string) {
	for _, cl := range srv.Clients.GetAll() {
		if cl.Net.Listener == listener && !cl.Closed() {
			_ = srv.DisconnectClient(cl, packets.ErrServerShuttingDown)
		}
	}
}
