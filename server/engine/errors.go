package engine

import "github.com/ssgen/ssgen/internal/protocol"

// Error is a state store error. Its text is the exact message the service
// puts after "-ERR " in a response payload (see docs/wire-protocol.md),
// which the official clients compare as strings. Being a comparable string
// type, an Error works with errors.Is and errors.As. The names are those of
// the runtime's sentinels for the same texts.
type Error string

func (e Error) Error() string { return string(e) }

// Class is the word the server's log lines file e under: authorization,
// fencing, timestamp, quota, syntax, arguments, command, key, persistence,
// or "error" (protocol.Errors).
func (e Error) Class() string {
	if info, ok := protocol.LookupError(string(e)); ok {
		return info.Class
	}
	return protocol.OtherErrorClass
}

// The state store's errors, one for each text of protocol.Errors.
const (
	ErrTimestampSkew            Error = protocol.ErrTimestampSkew
	ErrFencingTokenRequired     Error = protocol.ErrFencingTokenRequired
	ErrFencingTokenSkew         Error = protocol.ErrFencingTokenSkew
	ErrFencingTokenLowerVersion Error = protocol.ErrFencingTokenLowerVersion
	ErrQuotaExceeded            Error = protocol.ErrQuotaExceeded
	ErrSyntax                   Error = protocol.ErrSyntax
	ErrNotAuthorized            Error = protocol.ErrNotAuthorized
	ErrUnknownCommand           Error = protocol.ErrUnknownCommand
	ErrWrongNumberOfArguments   Error = protocol.ErrWrongNumberOfArguments
	ErrMissingTimestamp         Error = protocol.ErrMissingTimestamp
	ErrMalformedTimestamp       Error = protocol.ErrMalformedTimestamp
	ErrKeyLengthZero            Error = protocol.ErrKeyLengthZero
)

// ErrPersistence answers a write whose change could not be made durable,
// and every request whose answer depended on such a change. The change is
// then undone in memory: the client saw an error, so the store must look
// as if the request never arrived. (The real service has no such message;
// the text is ours and names what happened.)
const ErrPersistence Error = protocol.ErrPersistence

// ErrInvalidToken answers a SCAN whose continuation token this engine did
// not issue for that pattern and Request.TokenScope (scantoken.go).
// Also ssgen's own text.
const ErrInvalidToken Error = protocol.ErrInvalidToken

// ErrSchemaViolation starts the answer to a SET the server's schema check
// refused (Options.Enforce); the text goes on to name the declaration and
// field path (protocol.SchemaViolation). The engine never gives it.
const ErrSchemaViolation Error = protocol.SchemaViolationPrefix
