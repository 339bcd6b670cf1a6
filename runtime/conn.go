package runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/eclipse/paho.golang/paho/session/state"

	"github.com/ssgen/ssgen/internal/bufconn"
	"github.com/ssgen/ssgen/internal/pahoctx"
	"github.com/ssgen/ssgen/internal/pahostore"
)

// conn is one MQTT connection: a paho.Client over one network connection,
// with a paho session state of its own. Its context ends when the
// connection is lost, which is what fails the requests in flight on it
// promptly.
//
// The state is per connection, not per Client: nothing in it outlives a
// connection anyway (connSession.ConnectionLost forgets every request),
// and paho reads its send quota without a lock, so a request still
// publishing on a dying connection would race the next connection's
// CONNACK over a shared state.
type conn struct {
	pc      *paho.Client
	nc      net.Conn
	sess    *state.State
	ctx     context.Context
	cancel  context.CancelCauseFunc
	recvMax int
	maxPkt  int // the broker's Maximum Packet Size, 0 when unlimited
	up      time.Time
	// notifErr is the broker's refusal of the notification subscription
	// on this connection; nil when it is granted. KEYNOTIFY is not sent
	// on a connection that has one.
	notifErr *notifyRefusedError
}

// packetTimeout disables paho's own per-packet timeout (10 s by default,
// whatever the context says); requests bound themselves with contexts.
const packetTimeout = 365 * 24 * time.Hour

// connect makes one connection attempt: network dial, CONNECT, and the
// subscriptions the session needs. It publishes the connection to
// requesters only once all of that succeeded.
func (c *Client) connect(ctx context.Context, first bool) (*conn, error) {
	ctx, cancel := c.untilClose(ctx, c.cfg.ConnectTimeout) // Close must be able to abort an attempt
	defer cancel()

	netConn, err := c.dialNet(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := c.connectPacket(first)
	if err != nil {
		_ = netConn.Close()
		return nil, err
	}

	cctx, ccancel := context.WithCancelCause(context.Background())
	cn := &conn{ctx: cctx, cancel: ccancel, nc: netConn, sess: pahostore.NewState()}
	pcfg := paho.ClientConfig{
		ClientID:          c.cfg.ClientID,
		Conn:              netConn,
		Session:           connSession{State: cn.sess, cancel: ccancel},
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){c.onPublish},
		PacketTimeout:     packetTimeout,
		OnServerDisconnect: func(d *paho.Disconnect) {
			reason := ""
			if d.Properties != nil {
				reason = d.Properties.ReasonString
			}
			ccancel(&BrokerError{Packet: "DISCONNECT", ReasonCode: d.ReasonCode, Reason: reason})
		},
		OnClientError: func(err error) { ccancel(err) },
	}
	if cp.Properties.AuthMethod != "" {
		pcfg.AuthHandler = &satAuther{method: cp.Properties.AuthMethod, data: cp.Properties.AuthData}
	}
	pc := paho.NewClient(pcfg)
	cn.pc = pc
	connack, err := pc.Connect(ctx, cp)
	if err != nil {
		ccancel(err)
		if connack != nil && connack.ReasonCode >= 0x80 {
			reason := ""
			if connack.Properties != nil {
				reason = connack.Properties.ReasonString
			}
			return nil, &BrokerError{Packet: "CONNACK", ReasonCode: connack.ReasonCode, Reason: reason}
		}
		if ctx.Err() != nil && c.isClosing() {
			return nil, ErrClosed
		}
		return nil, &ConnectError{Addr: c.cfg.addr(), TLS: c.cfg.TLS, Stage: StageMQTT, Err: err}
	}
	go func() {
		<-pc.Done()
		ccancel(errors.New("connection closed"))
	}()

	cn.recvMax = 65535
	if connack.Properties != nil && connack.Properties.ReceiveMaximum != nil {
		cn.recvMax = int(*connack.Properties.ReceiveMaximum)
	}
	if connack.Properties != nil && connack.Properties.MaximumPacketSize != nil {
		cn.maxPkt = int(*connack.Properties.MaximumPacketSize)
	}
	if !first && !connack.SessionPresent {
		c.st.sessionsLost.Add(1)
		c.log.Warn("MQTT session was lost; subscribing again")
	}
	// A resumed session keeps its subscriptions; the first connection
	// subscribes whatever the broker says, since an old session under this
	// id may hold other options. A resumed session lacks the notification
	// subscription if the broker refused it before: it is asked for again,
	// alone, since the broker's rules may have changed.
	prev := c.notif.Load()
	cn.notifErr = prev
	if whole := first || !connack.SessionPresent; whole || prev != nil {
		// A connection lost meanwhile must not leave the SUBACK wait to the
		// connect timeout: nothing answers it any more.
		sctx, scancel := context.WithCancel(ctx)
		stop := context.AfterFunc(cctx, scancel)
		notifErr, err := c.subscribe(sctx, pc, whole)
		stop()
		scancel()
		if notifErr != nil && c.cfg.NotifyWithoutSubscription {
			c.log.Warn("the broker refused the notification subscription; watching anyway (Config.NotifyWithoutSubscription: the broker delivers notifications without one)",
				"topic", notifErr.filter, "reason_code", fmt.Sprintf("0x%02X", notifErr.suback.ReasonCode))
			notifErr = nil
		}
		cn.notifErr = notifErr
		if err != nil {
			_ = pc.Disconnect(&paho.Disconnect{ReasonCode: 0})
			ccancel(err)
			var be *BrokerError
			if !errors.As(err, &be) {
				err = &ConnectError{Addr: c.cfg.addr(), TLS: c.cfg.TLS, Stage: StageSubscribe, Err: err}
			}
			return nil, err
		}
	}
	cn.up = time.Now()
	c.st.connects.Add(1)
	c.log.Info("connected", "addr", c.cfg.addr(), "session_present", connack.SessionPresent, "receive_maximum", cn.recvMax)
	switch {
	case cn.notifErr != nil:
		c.log.Warn("connected without notifications: the broker refused the notification subscription; "+
			"requests work, but every watch and KEYNOTIFY fails with ErrNotificationsUnavailable "+
			"(grant this client a subscription to its notification topic to use them)",
			"topic", cn.notifErr.filter, "reason_code", fmt.Sprintf("0x%02X", cn.notifErr.suback.ReasonCode))
	case prev != nil:
		c.log.Info("notifications available again: the broker granted the notification subscription", "topic", c.notifyPrefix+"+")
	}
	return cn, nil
}

// subscribe takes the response topic (when withResponse) and this
// client's notification topics, QoS 1 with No Local (a client never wants
// its own requests back), in one SUBSCRIBE whose SUBACK has a reason code
// per subscription. A refused response topic fails the connection
// (nothing can work without it: a *BrokerError); a refused notification
// topic only takes notifications away (notifErr, with err nil).
func (c *Client) subscribe(ctx context.Context, pc *paho.Client, withResponse bool) (notifErr *notifyRefusedError, err error) {
	filter := c.notifyPrefix + "+"
	subs := []paho.SubscribeOptions{
		{Topic: c.respTopic, QoS: 1, NoLocal: true},
		{Topic: filter, QoS: 1, NoLocal: true},
	}
	if !withResponse {
		subs = subs[1:]
	}
	// paho returns the SUBACK along with an error when any code is a
	// refusal; the codes say which.
	// The wait for SUBACK ends with the connection, not only with ctx.
	subCtx, stop := pahoctx.Bound(ctx, pc)
	defer stop()
	sa, err := pc.Subscribe(subCtx, &paho.Subscribe{Subscriptions: subs})
	if sa == nil {
		return nil, err
	}
	if len(sa.Reasons) != len(subs) {
		return nil, fmt.Errorf("SUBACK with %d reason codes for %d subscriptions", len(sa.Reasons), len(subs))
	}
	reason := ""
	if sa.Properties != nil {
		reason = sa.Properties.ReasonString
	}
	if withResponse && sa.Reasons[0] >= 0x80 {
		return nil, &BrokerError{Packet: "SUBACK", ReasonCode: sa.Reasons[0], Reason: reason}
	}
	if code := sa.Reasons[len(subs)-1]; code >= 0x80 {
		return &notifyRefusedError{filter: filter, suback: &BrokerError{Packet: "SUBACK", ReasonCode: code, Reason: reason}}, nil
	}
	return nil, nil
}

func (c *Client) connectPacket(first bool) (*paho.Connect, error) {
	keepAlive := uint16(c.cfg.KeepAlive / time.Second)
	expiry := uint32(max(c.cfg.SessionExpiry, 0) / time.Second)
	recvMax := uint16(65535)
	cp := &paho.Connect{
		ClientID:   c.cfg.ClientID,
		KeepAlive:  keepAlive,
		CleanStart: first && c.cfg.CleanStart,
		Properties: &paho.ConnectProperties{
			SessionExpiryInterval: &expiry,
			ReceiveMaximum:        &recvMax,
		},
	}
	if c.cfg.Username != "" {
		cp.Username, cp.UsernameFlag = c.cfg.Username, true
	}
	switch {
	case c.cfg.PasswordFile != "":
		pw, err := os.ReadFile(c.cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("%w: password file: %v", ErrInvalidArgument, err)
		}
		cp.Password, cp.PasswordFlag = pw, true
	case c.cfg.Password != nil:
		cp.Password, cp.PasswordFlag = c.cfg.Password, true
	}
	if c.cfg.SATFile != "" {
		tok, err := os.ReadFile(c.cfg.SATFile)
		if err != nil {
			return nil, fmt.Errorf("%w: service account token file: %v", ErrInvalidArgument, err)
		}
		cp.Properties.AuthMethod = "K8S-SAT"
		cp.Properties.AuthData = []byte(strings.TrimSpace(string(tok)))
	}
	return cp, nil
}

func (c *Client) dialNet(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1} // MQTT keep-alive does the job
	nc, err := d.DialContext(ctx, "tcp", c.cfg.addr())
	if err != nil {
		return nil, &ConnectError{Addr: c.cfg.addr(), TLS: c.cfg.TLS, Stage: StageTCP, Err: err}
	}
	if !c.cfg.TLS {
		return bufconn.New(nc), nil // still one writev per packet: see bufconn
	}
	tc, err := c.tlsConfig()
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	conn := tls.Client(nc, tc)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, &ConnectError{Addr: c.cfg.addr(), TLS: true, Stage: StageTLS, Err: err}
	}
	// paho writes a packet in several Write calls; over TLS they must not
	// interleave between goroutines.
	return bufconn.New(packets.NewThreadSafeConn(conn)), nil
}

// tlsConfig is rebuilt for every connection so rotated files apply.
func (c *Client) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.cfg.TLSConfig != nil {
		tc = c.cfg.TLSConfig.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = c.cfg.Host
	}
	if c.cfg.CAFile != "" {
		pem, err := os.ReadFile(c.cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CA file: %v", ErrInvalidArgument, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrInvalidArgument, c.cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.cfg.CertFile, c.cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate: %v", ErrInvalidArgument, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if c.cfg.Host == "localhost" && !tc.InsecureSkipVerify && tc.VerifyConnection == nil {
		// As the official SDKs do, accept a broker certificate issued for
		// its cluster name when reached through localhost (a port forward),
		// but unlike them still verify the chain.
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true // #nosec G402 -- chain verified below
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return tc, nil
}

// satAuther answers an AUTH continuation with the same token; K8S-SAT is a
// single-round method, but a broker may still ask.
type satAuther struct {
	method string
	data   []byte
}

func (a *satAuther) Authenticate(*paho.Auth) *paho.Auth {
	return &paho.Auth{ReasonCode: 0x18, Properties: &paho.AuthProperties{AuthMethod: a.method, AuthData: a.data}}
}

func (a *satAuther) Authenticated() {}

// retryableConnectError tells a broker that is down or busy from a refusal
// that only a configuration change can fix.
func retryableConnectError(err error) bool {
	if errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) {
		return false
	}
	var be *BrokerError
	if errors.As(err, &be) && be.Packet == "CONNACK" {
		switch be.ReasonCode {
		case 0x84, 0x85, 0x86, 0x87, 0x8A, 0x8C: // version, client id, credentials, authorization, banned, auth method
			return false
		}
	}
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce x509.CertificateInvalidError
	return !errors.As(err, &ue) && !errors.As(err, &he) && !errors.As(err, &ce)
}

// run keeps the client connected until Close. It owns the reconnect loop:
// every loss waits a backoff delay, and a connection that dies before
// StableAfter does not reset the failure streak, so a client-id takeover
// ping-pong or a broker that accepts then kicks slows down instead of
// storming.
func (c *Client) run(cn *conn) {
	defer close(c.loopDone)
	streak := 0
	for {
		select {
		case <-c.closing:
			c.shutdown(cn)
			return
		case <-cn.ctx.Done():
		}
		cause := context.Cause(cn.ctx)
		c.clearConn(cn)
		_ = cn.sess.Close() // releases anything still waiting on the dead connection
		lived := time.Since(cn.up)
		if lived >= c.cfg.StableAfter {
			streak = 0
		}
		c.log.Warn("connection lost", "err", cause, "lived", lived.Round(time.Millisecond))
		for {
			t := time.NewTimer(c.backoff.delay(streak))
			streak++
			select {
			case <-c.closing:
				t.Stop()
				c.finish()
				return
			case <-t.C:
			}
			next, err := c.connect(context.Background(), false)
			if err == nil {
				cn = next
				c.setConn(cn)
				break
			}
			if errors.Is(err, ErrClosed) {
				c.finish()
				return
			}
			c.log.Warn("reconnect failed", "attempt", streak, "err", err)
		}
	}
}

// setConn publishes a new connection to requesters and tells the
// listeners (watched keys are registered on it, pattern watches rescan).
// Dial calls it for the first connection before any Watch can exist; run
// for every reconnection.
func (c *Client) setConn(cn *conn) {
	c.mu.Lock()
	c.cur = cn
	c.notif.Store(cn.notifErr)
	close(c.ready)
	c.mu.Unlock()
	c.sem.setLimit(cn.recvMax)
	c.listeners.connected(cn)
}

// clearConn withdraws cn from requesters if it is still the current
// connection; they wait for the next one.
func (c *Client) clearConn(cn *conn) {
	c.mu.Lock()
	if c.cur == cn {
		c.cur = nil
		c.ready = make(chan struct{})
	}
	c.mu.Unlock()
}

// shutdown ends the session on the broker: Session Expiry 0 in the
// DISCONNECT, so nothing is kept for a client that is gone for good.
func (c *Client) shutdown(cn *conn) {
	zero := uint32(0)
	// A broker that stopped reading must not make Close hang on the write.
	_ = cn.nc.SetWriteDeadline(time.Now().Add(time.Second))
	_ = cn.pc.Disconnect(&paho.Disconnect{ReasonCode: 0, Properties: &paho.DisconnectProperties{SessionExpiryInterval: &zero}})
	<-cn.pc.Done()
	cn.cancel(ErrClosed)
	c.clearConn(cn)
	_ = cn.sess.Close() // releases anything still blocked in paho
	c.finish()
}

func (c *Client) finish() { c.log.Info("closed") }

// untilClose is parent bounded by d that also ends when the Client closes.
func (c *Client) untilClose(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, d)
	go func() {
		select {
		case <-c.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// current waits for a live connection.
func (c *Client) current(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		cn, ready := c.cur, c.ready
		c.mu.Unlock()
		if cn != nil && cn.ctx.Err() == nil {
			return cn, nil
		}
		if cn != nil { // lost, run has not noticed yet
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-c.closing:
				return nil, ErrClosed
			case <-time.After(time.Millisecond):
			}
			continue
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closing:
			return nil, ErrClosed
		}
	}
}

// onPublish is paho's callback for every incoming PUBLISH. paho calls it
// from one goroutine per connection and acknowledges only after it
// returns, so it never blocks: responses go to a buffered channel,
// notifications to bounded per-watcher buffers.
func (c *Client) onPublish(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	switch {
	case p.Topic == c.respTopic:
		var corr []byte
		if p.Properties != nil {
			corr = p.Properties.CorrelationData
		}
		if !c.pending.deliver(corr, p) {
			c.st.late.Add(1)
			c.log.Debug("dropped a response nobody waits for", "correlation", fmt.Sprintf("%x", corr))
		}
		return true, nil
	case strings.HasPrefix(p.Topic, c.notifyPrefix):
		c.st.notifs.Add(1)
		c.listeners.notified(p)
		return true, nil
	}
	return false, nil
}
