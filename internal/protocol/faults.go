package protocol

// User property names of the fault vocabulary Microsoft's SDK tests speak
// to their fault-injecting test broker, and that ssgen serve
// --fault-injection honours on the embedded broker. Each is put by a
// client on its own packet; values are decimal integers except
// FaultRequestID's.
const (
	// FaultDisconnect, on PUBLISH, SUBSCRIBE or UNSUBSCRIBE: the broker
	// disconnects the client with this DISCONNECT reason code before
	// acknowledging or processing the packet.
	FaultDisconnect = "fault:disconnect"
	// FaultDelay, with FaultDisconnect: the packet is processed and
	// acknowledged, and the disconnect follows this many seconds later.
	FaultDelay = "fault:delay"
	// FaultRejectConnect, on CONNECT: the CONNACK reason code refusing it.
	FaultRejectConnect = "fault:rejectconnect"
	// FaultRejectPublish, FaultRejectSubscribe and FaultRejectUnsubscribe:
	// the reason code of the PUBACK, SUBACK or UNSUBACK refusing the packet.
	FaultRejectPublish     = "fault:rejectpublish"
	FaultRejectSubscribe   = "fault:rejectsubscribe"
	FaultRejectUnsubscribe = "fault:rejectunsubscribe"
	// FaultRequestID is any string: the fault fires only the first time
	// the broker sees the id on a packet of that type, so the client's
	// retry of the same packet goes through.
	FaultRequestID = "fault:requestid"
	// FaultPrefix starts every name above.
	FaultPrefix = "fault:"
)
