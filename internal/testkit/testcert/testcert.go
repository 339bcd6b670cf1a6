// Package testcert makes throw-away certificate authorities and the
// certificates they issue, for tests of TLS and certificate
// authentication. Keys are ECDSA P-256, certificates are valid from an hour
// ago to an hour from now, and files go to the test's temporary directory:
// nothing is kept in the repository.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a private certificate authority made for one test.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	Pool *x509.CertPool // holds Cert alone: a RootCAs or ClientCAs
	last atomic.Int64   // the last serial number issued
}

// NewCA makes a CA whose certificate has common name name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Cert: cert, Key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.last.Store(1)
	return ca
}

// Server issues a server certificate with common name cn for hosts, each
// an IP address or a DNS name; with no hosts, for 127.0.0.1 and localhost.
func (ca *CA) Server(t testing.TB, cn string, hosts ...string) tls.Certificate {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "localhost"}
	}
	return ca.issue(t, x509.ExtKeyUsageServerAuth, cn, hosts)
}

// Client issues a client certificate with common name cn and the DNS
// names dns.
func (ca *CA) Client(t testing.TB, cn string, dns ...string) tls.Certificate {
	t.Helper()
	return ca.issue(t, x509.ExtKeyUsageClientAuth, cn, dns)
}

func (ca *CA) issue(t testing.TB, usage x509.ExtKeyUsage, cn string, hosts []string) tls.Certificate {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.last.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// CAFile writes the CA's certificate as PEM into a temporary directory of
// the test and returns its path.
func (ca *CA) CAFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	WritePEM(t, tls.Certificate{Certificate: [][]byte{ca.Cert.Raw}}, path, "")
	return path
}

// Files writes c and its key as PEM into a temporary directory of the test
// and returns their paths.
func Files(t testing.TB, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	WritePEM(t, c, certFile, keyFile)
	return certFile, keyFile
}

// WritePEM writes c's certificate to certPath and, when keyPath is not
// empty, its private key (PKCS #8) to keyPath.
func WritePEM(t testing.TB, c tls.Certificate, certPath, keyPath string) {
	t.Helper()
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if keyPath == "" {
		return
	}
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
