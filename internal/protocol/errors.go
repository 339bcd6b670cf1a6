package protocol

// ErrorPrefix starts the simple error of every -ERR answer; the error
// text follows it ("-ERR " + text + CRLF on the wire).
const ErrorPrefix = "ERR "

// The state store's error texts: what a response payload carries after
// "-ERR ". The official clients compare them as strings, so they must
// never be reworded. Package runtime turns each into a sentinel error and
// package engine into an engine.Error; both are built from these.
const (
	ErrTimestampSkew            = "the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	ErrFencingTokenRequired     = "a fencing token is required for this request"
	ErrFencingTokenSkew         = "the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	ErrFencingTokenLowerVersion = "the request fencing token is a lower version than the fencing token protecting the resource"
	ErrQuotaExceeded            = "the quota has been exceeded"
	ErrSyntax                   = "syntax error"
	ErrNotAuthorized            = "not authorized"
	ErrUnknownCommand           = "unknown command"
	ErrWrongNumberOfArguments   = "wrong number of arguments"
	ErrMissingTimestamp         = "missing timestamp"
	ErrMalformedTimestamp       = "malformed timestamp"
	ErrKeyLengthZero            = "the key length is zero"
)

// ErrPersistence is ssgen's own error text, for a write whose change could
// not be made durable (the real service has no such answer).
const ErrPersistence = "persistence failure: the change could not be written to disk and was not applied"

// ErrInvalidToken is ssgen's own error text (the real service documents
// none), for a SCAN continuation token the service did not issue for this
// pattern to a client of the same access: forged, altered, a differently
// authorized client's or another pattern's, or from before the service
// restarted.
const ErrInvalidToken = "invalid continuation token"
