package protocol

// User property names of the request/response envelope.
const (
	// PropSourceID is the requesting client's id (requests).
	PropSourceID = "__srcId"
	// PropTimestamp is the sender's hybrid logical clock: on a request the
	// client's, on a response and a notification the version it reports.
	PropTimestamp = "__ts"
	// PropFencingToken is a request's fencing token, an HLC.
	PropFencingToken = "__ft"
	// PropProtocolVersion is the protocol version the message speaks.
	PropProtocolVersion = "__protVer"
	// PropPartition and PropHighPriority are routing hints every official
	// client sends; the service ignores them.
	PropPartition    = "$partition"
	PropHighPriority = "$high_priority"
	// PropPersistence asks the broker to keep a SET's key on disk (the
	// broker's dynamic persistence); its value is PersistenceOn.
	PropPersistence = "aio-persistence"

	// PropStatus is a response's status code (Status*), always present.
	PropStatus = "__stat"
	// PropStatusMessage explains a status other than StatusOK.
	PropStatusMessage = "__stMsg"
	// PropPropertyName and PropPropertyValue name the header a
	// StatusBadRequest is about.
	PropPropertyName  = "__propName"
	PropPropertyValue = "__propVal"
	// PropSupportedMajor lists the major versions the service speaks, and
	// PropRequestVersion echoes the request's version, on a
	// StatusVersionNotSupported.
	PropSupportedMajor = "__supProtMajVer"
	PropRequestVersion = "__requestProtVer"
)

// Values of the envelope.
const (
	// ProtocolVersion is the version ssgen speaks, and SupportedMajor its
	// major part, the only one served.
	ProtocolVersion = "1.0"
	SupportedMajor  = "1"
	// ContentType is the Content Type of every request, response and
	// notification.
	ContentType = "application/octet-stream"
	// PersistenceOn is PropPersistence's value that asks for persistence.
	PersistenceOn = "true"
	// CorrelationDataName is how a StatusBadRequest names the missing
	// Correlation Data in PropPropertyName (as the official SDKs do).
	CorrelationDataName = "Correlation Data"
	// ServiceNodeID is the node id of the service's hybrid logical clock.
	ServiceNodeID = "StateStore"
)

// Status codes (PropStatus). Every state store answer, -ERR included, is
// StatusOK; the others refuse the envelope.
const (
	StatusOK                  = 200
	StatusBadRequest          = 400
	StatusVersionNotSupported = 505
)

// Status messages (PropStatusMessage) of the envelope refusals. The same
// text is the refusal's -ERR payload, except for an unsupported version,
// whose payload is UnsupportedVersionText followed by the version.
const (
	StatusMsgVersionNotSupported    = "unsupported version"
	StatusMsgCorrelationDataMissing = "correlation data missing"
	StatusMsgSourceIDMissing        = "source id missing"
	UnsupportedVersionText          = "unsupported protocol version "
)
