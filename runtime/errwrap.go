package runtime

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
)

// prefix starts every error message of this package, once: an error that
// wraps another of this package's errors drops the inner one's prefix
// (see wrapped).
const prefix = "statestore: "

// wrapped adds context (the verb a request was for, the key a watch was
// on) to an error, keeping one prefix however many of this package's
// errors it wraps. It unwraps to err.
type wrapped struct {
	context string
	err     error
}

func wrap(err error, context string) error { return &wrapped{context: context, err: err} }

func (e *wrapped) Error() string { return prefix + e.context + ": " + bare(e.err) }

func (e *wrapped) Unwrap() error { return e.err }

// bare is err's message without this package's prefix.
func bare(err error) string { return strings.TrimPrefix(err.Error(), prefix) }

// Connection stages a ConnectError names.
const (
	StageTCP       = "tcp"       // the network connection
	StageTLS       = "tls"       // the TLS handshake
	StageMQTT      = "mqtt"      // CONNECT and its CONNACK
	StageSubscribe = "subscribe" // the response and notification subscriptions
)

// ConnectError is a connection attempt that failed before the client
// could send requests: where it failed (Stage) and why (Err, to which it
// unwraps: a *net.OpError, io.EOF when the broker closed the connection,
// a TLS or certificate error, paho's error). A broker's refusal in its
// CONNACK is a *BrokerError instead.
//
// A broker that closes the connection during the TLS handshake often does
// not speak TLS on that port; one that closes it before answering a plain
// CONNECT often expects TLS. ClosedByBroker tells these cases apart from
// the others.
type ConnectError struct {
	Addr  string // host:port
	TLS   bool   // whether the attempt used TLS
	Stage string // StageTCP, StageTLS, StageMQTT or StageSubscribe
	Err   error
}

func (e *ConnectError) Error() string {
	var b strings.Builder
	b.WriteString(prefix + "connect " + e.Addr + ": ")
	switch e.Stage {
	case StageTLS:
		b.WriteString("TLS handshake: ")
	case StageMQTT:
		b.WriteString("MQTT CONNECT: ")
	case StageSubscribe:
		b.WriteString("subscribe: ")
	}
	switch {
	case e.ClosedByBroker():
		b.WriteString("the broker closed the connection")
	case e.Refused():
		b.WriteString("connection refused")
	default:
		b.WriteString(causeText(e.Err))
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// Refused reports a TCP connection the host refused: nothing listens on
// the port.
func (e *ConnectError) Refused() bool {
	return e.Stage == StageTCP && errors.Is(e.Err, syscall.ECONNREFUSED)
}

// ClosedByBroker reports a connection the broker closed (or reset) after
// accepting it, during the TLS handshake or before answering CONNECT.
func (e *ConnectError) ClosedByBroker() bool {
	if e.Stage != StageTLS && e.Stage != StageMQTT {
		return false
	}
	return errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) ||
		errors.Is(e.Err, syscall.ECONNRESET) || errors.Is(e.Err, net.ErrClosed)
}

// causeText is a network error's message without what the ConnectError
// already says (the operation and the address).
func causeText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var sc *os.SyscallError
		if errors.As(op.Err, &sc) {
			return sc.Err.Error()
		}
		return op.Err.Error()
	}
	return bare(err)
}
