package protocol

import "strings"

// ErrorPrefix starts the simple error of every -ERR answer; the error
// text follows it ("-ERR " + text + CRLF on the wire).
const ErrorPrefix = "ERR "

// The state store's error texts: what a response payload carries after
// "-ERR ". The official clients compare them as strings, so they must
// never be reworded. Package runtime turns each into a sentinel error and
// package engine into an engine.Error, both of the same name; Errors
// lists them all.
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

// SchemaViolationPrefix starts ssgen's own error text (the real service
// has no schema), for a SET refused by ssgen serve --enforce refuse: the
// value does not fit the declaration of its key. SchemaViolation builds
// the whole text.
const SchemaViolationPrefix = "schema violation: "

// MaxSchemaViolationText bounds a SchemaViolation text: its parts come
// from the schema and the written value, and stay data of bounded size.
const MaxSchemaViolationText = 400

// SchemaViolation is the -ERR text of a write refused by the schema:
// "schema violation: DECL PATH: MSG" (PATH absent for the whole value),
// clipped to MaxSchemaViolationText bytes and with no line breaks.
func SchemaViolation(decl, path, msg string) string {
	s := SchemaViolationPrefix + decl
	if path != "" {
		s += " " + path
	}
	s += ": " + msg
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	if len(b) > MaxSchemaViolationText {
		b = append(b[:MaxSchemaViolationText-3:MaxSchemaViolationText-3], "..."...)
	}
	return string(b)
}

// ErrorInfo is one -ERR answer of the service: its text, and the words
// ssgen's server files it under, in log lines (Class: the refusal's
// reason) and in ssgen_request_errors_total (Metric).
type ErrorInfo struct {
	Text   string
	Class  string
	Metric string
}

// Errors lists every -ERR answer the service gives, with its words, as
// Verbs lists the verbs: the engine builds its answers from it, the
// runtime matches a response's text against it, and the server's logs and
// the console's metrics name each refusal from it.
var Errors = [...]ErrorInfo{
	{ErrTimestampSkew, "timestamp", "timestamp_drift"},
	{ErrFencingTokenRequired, "fencing", "fencing_token_required"},
	{ErrFencingTokenSkew, "fencing", "fencing_token_drift"},
	{ErrFencingTokenLowerVersion, "fencing", "fencing_token_lower"},
	{ErrQuotaExceeded, "quota", "quota_exceeded"},
	{ErrSyntax, "syntax", "syntax_error"},
	{ErrNotAuthorized, "authorization", "not_authorized"},
	{ErrUnknownCommand, "command", "unknown_command"},
	{ErrWrongNumberOfArguments, "arguments", "wrong_arguments"},
	{ErrMissingTimestamp, "timestamp", "missing_timestamp"},
	{ErrMalformedTimestamp, "timestamp", "malformed_timestamp"},
	{ErrKeyLengthZero, "key", "key_length_zero"},
	{ErrPersistence, "persistence", "persistence_failure"},
	{ErrInvalidToken, OtherErrorClass, OtherErrorMetric},
	// Matched by its prefix (LookupError): the rest names the declaration.
	{SchemaViolationPrefix, "schema", "schema_violation"},
}

// The words of an error text Errors does not list. ErrInvalidToken has
// them too: it has never had words of its own.
const (
	OtherErrorClass  = "error"
	OtherErrorMetric = "other"
)

// LookupError returns the entry of Errors whose text is text.
func LookupError(text string) (ErrorInfo, bool) {
	for _, e := range Errors {
		if e.Text == text {
			return e, true
		}
	}
	if strings.HasPrefix(text, SchemaViolationPrefix) {
		return Errors[len(Errors)-1], true
	}
	return ErrorInfo{}, false
}
