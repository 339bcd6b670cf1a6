package access

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// ErrTLSFiles wraps every problem loading TLS files.
var ErrTLSFiles = errors.New("server: TLS files")

// LoadTLS builds the listener's TLS configuration from PEM files: the
// server certificate chain and its key, and, when clientCAFile is not
// empty, the CA bundle every client certificate must chain to (mutual
// TLS: a client without such a certificate fails the handshake). TLS 1.2
// is the minimum, as on the real broker.
func LoadTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("%w: a certificate needs both its file and its key", ErrTLSFiles)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSFiles, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(clientCAFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSFiles, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: no certificate in %s", ErrTLSFiles, clientCAFile)
	}
	cfg.ClientCAs = pool
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return cfg, nil
}

// certNames are the names a verified client certificate answers to in
// authorization rules: its subject common name, then its DNS, e-mail and
// URI subject alternative names. None when the connection is not TLS or
// its peer certificate was not verified against the client CA.
func certNames(cs *tls.ConnectionState) []string {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return nil
	}
	c := cs.PeerCertificates[0]
	var names []string
	if c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	names = append(names, c.DNSNames...)
	names = append(names, c.EmailAddresses...)
	for _, u := range c.URIs {
		names = append(names, u.String())
	}
	return names
}
