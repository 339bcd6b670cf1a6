package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestServiceErrorsMatchTheirSentinels(t *testing.T) {
	texts := map[string]error{
		"the request timestamp is too far in the future; ensure that the client and broker system clocks are synchronized":               ErrTimestampSkew,
		"a fencing token is required for this request":                                                                                   ErrFencingTokenRequired,
		"the request fencing token timestamp is too far in the future; ensure that the client and broker system clocks are synchronized": ErrFencingTokenSkew,
		"the request fencing token is a lower version than the fencing token protecting the resource":                                    ErrFencingTokenLowerVersion,
		"the quota has been exceeded": ErrQuotaExceeded,
		"syntax error":                ErrSyntax,
		"not authorized":              ErrNotAuthorized,
		"unknown command":             ErrUnknownCommand,
		"wrong number of arguments":   ErrWrongNumberOfArguments,
		"missing timestamp":           ErrMissingTimestamp,
		"malformed timestamp":         ErrMalformedTimestamp,
		"the key length is zero":      ErrKeyLengthZero,
		"persistence failure: the change could not be written to disk and was not applied": ErrPersistence,
	}
	for text, sentinel := range texts {
		if sentinel.Error() != text {
			t.Errorf("sentinel text %q, want %q", sentinel.Error(), text)
		}
		err := fmt.Errorf("wrapped: %w", &ServiceError{Text: text})
		if !errors.Is(err, sentinel) {
			t.Errorf("%q does not match its sentinel", text)
		}
		for _, other := range texts {
			if other != sentinel && errors.Is(err, other) {
				t.Errorf("%q also matches %v", text, other)
			}
		}
	}
	unknown := &ServiceError{Text: "brand new"}
	for _, s := range texts {
		if errors.Is(unknown, s) {
			t.Errorf("unknown text matches %v", s)
		}
	}
	if unknown.Error() != "statestore: brand new" {
		t.Errorf("Error() = %q", unknown.Error())
	}
}

func TestTransportErrorsAreRetryableAndServiceAnswersAreNot(t *testing.T) {
	retryable := []error{
		&connLostError{op: "GET"},
		&TimeoutError{Op: "GET", Connected: true},
		fmt.Errorf("x: %w", &TimeoutError{Op: "SET"}),
	}
	for _, err := range retryable {
		if !IsRetryable(err) {
			t.Errorf("%v is not retryable", err)
		}
	}
	if !errors.Is(&TimeoutError{}, context.DeadlineExceeded) {
		t.Error("TimeoutError does not match context.DeadlineExceeded")
	}
	for _, err := range []error{ErrNotFound, ErrConditionNotMet, &ServiceError{Text: "syntax error"}, &RPCError{Status: 400}, ErrClosed} {
		if IsRetryable(err) {
			t.Errorf("%v is retryable", err)
		}
	}
	if !errors.Is(&BrokerError{Packet: "PUBACK", ReasonCode: 0x87}, ErrNotAuthorized) {
		t.Error("a PUBACK 0x87 does not match ErrNotAuthorized")
	}
}
