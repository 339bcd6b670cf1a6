package testcert

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func TestIssuedCertificatesVerifyAgainstTheirCAOnly(t *testing.T) {
	ca, other := NewCA(t, "CA"), NewCA(t, "other")
	server := ca.Server(t, "server")
	leaf, err := x509.ParseCertificate(server.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: ca.Pool, DNSName: "localhost", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatalf("server certificate without 127.0.0.1: %v", err)
	}
	opts.Roots = other.Pool
	if _, err := leaf.Verify(opts); err == nil {
		t.Fatal("verified against another CA")
	}
	client := ca.Client(t, "device-1", "device-1.example")
	cl, _ := x509.ParseCertificate(client.Certificate[0])
	if cl.Subject.CommonName != "device-1" || cl.DNSNames[0] != "device-1.example" || cl.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Fatalf("client certificate %v %v serial %v", cl.Subject, cl.DNSNames, cl.SerialNumber)
	}
	certFile, keyFile := Files(t, client)
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		t.Fatalf("written pair does not load: %v", err)
	}
	if ca.CAFile(t) == "" {
		t.Fatal("no CA file")
	}
}
