package engine

// Error is a state store error. Its text is the exact message the service
// puts after "-ERR " in a response payload, which the official SDKs compare
// as strings, so the constants below must never be reworded. Being a
// comparable string type, an Error works with errors.Is and errors.As.
type Error string

func (e Error) Error() string { return string(e) }

// The state store's error messages (wire contract §4).
const (
	ErrRequestTimestampDrift Error = "the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	ErrFencingTokenRequired  Error = "a fencing token is required for this request"
	ErrFencingTokenDrift     Error = "the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized"
	ErrFencingTokenLower     Error = "the request fencing token is a lower version than the fencing token protecting the resource"
	ErrQuotaExceeded         Error = "the quota has been exceeded"
	ErrSyntax                Error = "syntax error"
	ErrNotAuthorized         Error = "not authorized"
	ErrUnknownCommand        Error = "unknown command"
	ErrWrongArgs             Error = "wrong number of arguments"
	ErrMissingTimestamp      Error = "missing timestamp"
	ErrMalformedTimestamp    Error = "malformed timestamp"
	ErrKeyLengthZero         Error = "the key length is zero"
)
