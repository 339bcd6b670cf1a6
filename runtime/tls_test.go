package runtime_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/server/servertest"
)

// corePKI is a throw-away CA with a server certificate for the TLS proxy
// and a client certificate's files for the runtime.
type corePKI struct {
	ca                   *testcert.CA
	serverCert           tls.Certificate
	caFile, cert, keyPEM string
}

func coreNewPKI(t *testing.T, serverNames ...string) *corePKI {
	t.Helper()
	ca := testcert.NewCA(t, "test CA")
	p := &corePKI{ca: ca, serverCert: ca.Server(t, "leaf", serverNames...), caFile: ca.CAFile(t)}
	p.cert, p.keyPEM = testcert.Files(t, ca.Client(t, "leaf"))
	return p
}

// coreTLSProxy terminates TLS (client certificate required) in front of
// the plain listener at target, as a TLS broker would.
func coreTLSProxy(t *testing.T, p *corePKI, target string) (port int) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{p.serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.ca.Pool,
		MinVersion:   tls.VersionTLS12,
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			front, err := ln.Accept()
			if err != nil {
				return
			}
			// Only a client that passed the handshake reaches the broker.
			if err := front.(*tls.Conn).Handshake(); err != nil {
				front.Close()
				continue
			}
			back, err := net.Dial("tcp", target)
			if err != nil {
				front.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, front, back)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(back, front); back.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(front, back); front.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

func TestTLSWithPrivateCAAndClientCertificate(t *testing.T) {
	pki := coreNewPKI(t, "127.0.0.1")
	srv := servertest.New(t)
	port := coreTLSProxy(t, pki, srv.Addr())

	cfg := testConfig(t, "mqtts://127.0.0.1:"+strconv.Itoa(port))
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = pki.caFile, pki.cert, pki.keyPEM
	c := dialConfig(t, cfg)
	ctx := testCtx(t)
	if _, err := c.Set(ctx, []byte("k"), []byte("over TLS"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, _, err := c.Get(ctx, []byte("k")); err != nil || string(v) != "over TLS" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	// Concurrent writers over one TLS connection must not interleave packets.
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Set(ctx, []byte("k"+strconv.Itoa(i)), make([]byte, 3000), runtime.SetOptions{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestTLSRefusesAnUnknownCAAtOnce(t *testing.T) {
	pki := coreNewPKI(t, "127.0.0.1")
	other := coreNewPKI(t, "127.0.0.1")
	srv := servertest.New(t)
	port := coreTLSProxy(t, pki, srv.Addr())

	cfg := testConfig(t, "mqtts://127.0.0.1:"+strconv.Itoa(port))
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = other.caFile, pki.cert, pki.keyPEM
	cfg.ConnectTimeout = time.Minute // a retried failure would stall the test
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := runtime.Dial(ctx, cfg)
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &ua) {
		t.Fatalf("Dial with the wrong CA: %v, want x509.UnknownAuthorityError", err)
	}
}

// Through a port forward the broker's certificate names the cluster, not
// localhost: accepted as the official SDKs do, but only with a valid chain.
func TestTLSToLocalhostVerifiesTheChainButNotTheName(t *testing.T) {
	pki := coreNewPKI(t, "aio-broker.cluster.local")
	srv := servertest.New(t)
	port := coreTLSProxy(t, pki, srv.Addr())

	cfg := testConfig(t, "mqtts://localhost:"+strconv.Itoa(port))
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = pki.caFile, pki.cert, pki.keyPEM
	c := dialConfig(t, cfg)
	if _, err := c.Set(testCtx(t), []byte("k"), []byte("v"), runtime.SetOptions{}); err != nil {
		t.Fatal(err)
	}

	other := coreNewPKI(t, "aio-broker.cluster.local")
	cfg.CAFile = other.caFile
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := runtime.Dial(ctx, cfg); err == nil {
		t.Fatal("localhost with an untrusted chain was accepted")
	}
}
