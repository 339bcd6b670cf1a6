package access

import (
	"crypto/tls"
	"errors"
)

// Security configures authentication and authorization of the embedded
// broker. The zero value lets every client in and allows everything, as a
// local development broker should; it is refused in external mode, where
// the other broker authenticates.
type Security struct {
	// TLS makes the listener speak TLS only. For mutual TLS set ClientAuth
	// to tls.RequireAndVerifyClientCert and ClientCAs to the CA that signs
	// client certificates (LoadTLS does both): a client without a
	// certificate signed by it fails the handshake, and a verified
	// certificate authenticates its client.
	TLS *tls.Config
	// Passwords, when not nil, authenticates clients by CONNECT user name
	// and password (see ParsePasswords). A client that sends a user name
	// must match an entry, even when it also has a certificate.
	Passwords Passwords
	// AllowAnonymous lets clients with neither a password nor a verified
	// certificate connect although Passwords or client certificates are
	// configured. Without any authentication configured, anonymous
	// clients are always allowed.
	AllowAnonymous bool
	// Authorization, when not nil, restricts requests by key (see
	// ParsePolicy); without it every authenticated client may do
	// everything.
	Authorization *Policy
}

// configured reports whether anything but the zero value is set.
func (s Security) configured() bool {
	return s.TLS != nil || s.Passwords != nil || s.AllowAnonymous || s.Authorization != nil
}

// certAuth reports whether verified client certificates authenticate.
func (s Security) certAuth() bool {
	return s.TLS != nil && s.TLS.ClientCAs != nil &&
		(s.TLS.ClientAuth == tls.RequireAndVerifyClientCert || s.TLS.ClientAuth == tls.VerifyClientCertIfGiven)
}

// anonymousAllowed reports whether a client with no credentials may
// connect.
func (s Security) anonymousAllowed() bool {
	return s.AllowAnonymous || s.Passwords == nil && !s.certAuth()
}

// Validate reports what is wrong with s, for the embedded broker or, when
// external, for a server attached to another broker.
func (s Security) Validate(external bool) error {
	if external && s.configured() {
		return errors.New("TLS, authentication and authorization apply to the embedded broker only")
	}
	if s.TLS != nil && len(s.TLS.Certificates) == 0 && s.TLS.GetCertificate == nil {
		return errors.New("TLS config without a server certificate")
	}
	return nil
}
