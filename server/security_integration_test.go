package server_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/crypto/bcrypt"

	"github.com/ssgen/ssgen/internal/testkit/testcert"
	"github.com/ssgen/ssgen/server"
	"github.com/ssgen/ssgen/server/engine"
)

// dialer opens a connection to the server: plain TCP when cfg is nil.
func dialConn(t testing.TB, e *env, cfg *tls.Config) (net.Conn, error) {
	t.Helper()
	u, err := url.Parse(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{Timeout: wait}
	if cfg == nil {
		return d.Dial("tcp", u.Host)
	}
	return tls.DialWithDialer(d, "tcp", u.Host, cfg)
}

// connectAs connects a raw client with optional TLS and credentials and
// returns it with the CONNACK; err is the connection's or CONNECT's
// failure (the CONNACK is still returned when the broker sent one).
// Each opt may change the CONNECT before it is sent (a will, say).
func connectAs(t testing.TB, e *env, id string, cfg *tls.Config, user, pass string, opts ...func(*paho.Connect)) (*client, *paho.Connack, error) {
	t.Helper()
	return connectResponding(t, e, id, ownResponseTopic(id), cfg, user, pass, opts...)
}

// connectResponding is connectAs with the client's response topic given.
func connectResponding(t testing.TB, e *env, id, respTopic string, cfg *tls.Config, user, pass string, opts ...func(*paho.Connect)) (*client, *paho.Connack, error) {
	t.Helper()
	conn, err := dialConn(t, e, cfg)
	if err != nil {
		return nil, nil, err
	}
	c := &client{
		t: t, e: e, id: id,
		respTopic: respTopic,
		resp:      make(chan *paho.Publish, 64),
		other:     make(chan *paho.Publish, 64),
	}
	c.pc = paho.NewClient(paho.ClientConfig{
		ClientID: id,
		Conn:     packets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			ch := c.other
			if pr.Packet.Topic == c.respTopic {
				ch = c.resp
			}
			select {
			case ch <- pr.Packet:
			default:
			}
			return true, nil
		}},
	})
	cp := &paho.Connect{ClientID: id, CleanStart: true, KeepAlive: 30}
	if user != "" {
		cp.UsernameFlag, cp.Username = true, user
		cp.PasswordFlag, cp.Password = true, []byte(pass)
	}
	for _, o := range opts {
		o(cp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.pc.Connect(ctx, cp)
	if err != nil {
		_ = conn.Close()
		return nil, ack, err
	}
	t.Cleanup(func() { _ = c.pc.Disconnect(&paho.Disconnect{}) })
	c.subscribe(c.respTopic)
	return c, ack, nil
}

func mustConnect(t testing.TB, e *env, id string, cfg *tls.Config, user, pass string) *client {
	t.Helper()
	c, _, err := connectAs(t, e, id, cfg, user, pass)
	if err != nil {
		t.Fatalf("connect %s: %v", id, err)
	}
	return c
}

func withSecurity(sec server.Security) func(*server.Options) {
	return func(o *server.Options) { o.Security = sec }
}

func serverTLS(t testing.TB, ca, clientCA *testcert.CA) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "server")}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		cfg.ClientCAs = clientCA.Pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

func TestTLSListenerServesTLSAndRefusesPlaintext(t *testing.T) {
	ca := testcert.NewCA(t, "server CA")
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{TLS: serverTLS(t, ca, nil)})})
	c := mustConnect(t, e, "tls-client", &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}, "", "")
	checkResponse(t, c.do("SET", "k", "v"), "+OK\r\n", true)

	if _, _, err := connectAs(t, e, "plain-client", nil, "", ""); err == nil {
		t.Fatal("a plaintext client connected to the TLS listener")
	}
}

func TestMutualTLSRefusesClientWithoutCertificate(t *testing.T) {
	ca := testcert.NewCA(t, "CA")
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{TLS: serverTLS(t, ca, ca)})})
	if _, _, err := connectAs(t, e, "no-cert", &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}, "", ""); err == nil {
		t.Fatal("a client without a certificate connected")
	}
	other := testcert.NewCA(t, "another CA")
	foreign := other.Client(t, "intruder")
	if _, _, err := connectAs(t, e, "foreign-cert", &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{foreign}}, "", ""); err == nil {
		t.Fatal("a client with a certificate from another CA connected")
	}
	good := ca.Client(t, "device-1")
	c := mustConnect(t, e, "with-cert", &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{good}}, "", "")
	checkResponse(t, c.do("GET", "k"), "$-1\r\n", false)
}

func passwords(t testing.TB, userPass ...string) server.Passwords {
	t.Helper()
	p := server.Passwords{}
	for i := 0; i < len(userPass); i += 2 {
		h, err := bcrypt.GenerateFromPassword([]byte(userPass[i+1]), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		p[userPass[i]] = h
	}
	return p
}

// connackCode is the refusal's reason code; paho returns the CONNACK
// along with the error when the broker sent one.
func connackCode(ack *paho.Connack) byte {
	if ack == nil {
		return 0
	}
	return ack.ReasonCode
}

func TestPasswordAuthenticationAcceptsRightAndRefusesWrong(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{Passwords: passwords(t, "alice", "s3cret")})})
	mustConnect(t, e, "alice-1", nil, "alice", "s3cret")
	for _, tc := range []struct{ name, user, pass string }{
		{"wrong password", "alice", "guess"},
		{"unknown user", "mallory", "s3cret"},
		{"no credentials", "", ""},
	} {
		_, ack, err := connectAs(t, e, "c-"+strings.ReplaceAll(tc.name, " ", "-"), nil, tc.user, tc.pass)
		if err == nil {
			t.Fatalf("%s: connected", tc.name)
		}
		if code := connackCode(ack); code != 0x86 {
			t.Errorf("%s: CONNACK 0x%02x (%v), want 0x86", tc.name, code, err)
		}
	}
}

func TestAllowAnonymousLetsClientsWithoutCredentialsIn(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{Passwords: passwords(t, "alice", "s3cret"), AllowAnonymous: true})})
	mustConnect(t, e, "anon", nil, "", "")
	if _, ack, err := connectAs(t, e, "bad", nil, "alice", "guess"); err == nil || connackCode(ack) != 0x86 {
		t.Fatalf("a wrong password connected with AllowAnonymous: %v", err)
	}
}

const integrationPolicy = `
rules:
  - principals: {clientIds: ["reader"]}
    stateStoreResources:
      - {keyType: pattern, keys: ["pub/*"], method: Read}
  - principals: {usernames: ["alice"]}
    stateStoreResources:
      - {keyType: string, keys: ["pub/a"], method: ReadWrite}
      - {keyType: hex, keys: ["00FF"], method: Write}
  - principals: {certificateNames: ["device-*"]}
    stateStoreResources:
      - {keyType: binary, keys: ["cHViL2E="], method: Write}
`

func TestAuthorizationAnswersNotAuthorizedAndChangesNothing(t *testing.T) {
	ca := testcert.NewCA(t, "CA")
	pol, err := server.ParsePolicy([]byte(integrationPolicy))
	if err != nil {
		t.Fatal(err)
	}
	sec := server.Security{TLS: serverTLS(t, ca, ca), Passwords: passwords(t, "alice", "pw", "reader", "pw"), Authorization: pol}
	sec.TLS.ClientAuth = tls.VerifyClientCertIfGiven // passwords for some, certificates for others
	e := newEnv(t, "", []func(*server.Options){withSecurity(sec)})
	clientTLS := &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}
	certTLS := clientTLS.Clone()
	certTLS.Certificates = []tls.Certificate{ca.Client(t, "device-7")}

	// reader is named by its client id; it still needs credentials, since
	// anonymous clients are refused once authentication is configured.
	reader := mustConnect(t, e, "reader", clientTLS, "reader", "pw")
	alice := mustConnect(t, e, "alice-phone", clientTLS, "alice", "pw")
	device := mustConnect(t, e, "dev", certTLS, "", "")
	const denied = "-ERR not authorized\r\n"

	checkResponse(t, alice.do("SET", "pub/a", "1"), "+OK\r\n", true)
	for _, tc := range []struct {
		who  *client
		args []string
		want string
	}{
		{reader, []string{"GET", "pub/a"}, "$1\r\n1\r\n"},
		{reader, []string{"KEYNOTIFY", "pub/a"}, "+OK\r\n"},
		{reader, []string{"SET", "pub/a", "2"}, denied},
		{reader, []string{"DEL", "pub/a"}, denied},
		{reader, []string{"VDEL", "pub/a", "1"}, denied},
		{reader, []string{"GET", "priv"}, denied},
		{reader, []string{"KEYNOTIFY", "priv"}, denied},
		{reader, []string{"SCAN", "*"}, "*1\r\n*1\r\n$5\r\npub/a\r\n"}, // only what it may read
		{alice, []string{"GET", "pub/a"}, "$1\r\n1\r\n"},
		{alice, []string{"GET", "pub/b"}, denied},
		{alice, []string{"SET", "\x00\xff", "v"}, "+OK\r\n"},
		{alice, []string{"GET", "\x00\xff"}, denied},
		{device, []string{"SET", "pub/a", "3"}, "+OK\r\n"},
		{device, []string{"GET", "pub/a"}, denied},
		{device, []string{"DEL", "pub/b"}, denied},
	} {
		p := tc.who.do(tc.args...)
		if string(p.Payload) != tc.want {
			t.Errorf("%s %q: %q, want %q", tc.who.id, tc.args, p.Payload, tc.want)
		}
		if tc.want == denied {
			checkResponse(t, p, denied, false)
		}
	}
	if ent, _ := e.srv.Engine().Lookup([]byte("pub/a")); string(ent.Value) != "3" {
		t.Fatalf("pub/a = %q, want 3", ent.Value)
	}
	if got := e.srv.Engine().Watchers([]byte("priv")); len(got) != 0 {
		t.Fatalf("a refused KEYNOTIFY registered: %v", got)
	}
}

func TestSubscribingToAnotherClientsTopicsIsRefused(t *testing.T) {
	e := newEnv(t, "", nil)
	spy := e.connect("spy")
	victim := e.connect("victim")
	victim.subscribeNotify()
	checkResponse(t, victim.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	for _, filter := range []string{
		server.NotifyTopic("victim", []byte("k")),
		server.NotifyPrefix + "/+/command/notify/+",
		victim.respTopic,
		"clients/victim/#",
		"clients/#",
		"#",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		ack, err := spy.pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
		cancel()
		if err == nil && ack.Reasons[0] < 0x80 {
			t.Errorf("subscribe %q granted", filter)
		} else if ack != nil && ack.Reasons[0] != 0x87 {
			t.Errorf("subscribe %q: reason 0x%02x, want 0x87", filter, ack.Reasons[0])
		}
	}
	spy.subscribeNotify() // its own topics stay open
	checkResponse(t, spy.do("SET", "k", "v"), "+OK\r\n", true)
	if p := victim.notification(); p.Topic != server.NotifyTopic("victim", []byte("k")) {
		t.Fatalf("victim got %q", p.Topic)
	}
	spy.expectNoResponse()
	select {
	case p := <-spy.other:
		t.Fatalf("spy received %q", p.Topic)
	default:
	}

	// Nobody but the service publishes into the notification space.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := spy.pc.Publish(ctx, &paho.Publish{QoS: 1, Topic: server.NotifyTopic("victim", []byte("k")), Payload: []byte("forged")})
	if err == nil && res.ReasonCode < 0x80 {
		t.Fatalf("forged notification accepted: %+v", res)
	}
}

func TestAClientIDCannotBeTakenOverByAnotherIdentity(t *testing.T) {
	e := newEnv(t, "", []func(*server.Options){withSecurity(server.Security{Passwords: passwords(t, "alice", "a", "bob", "b")})})
	alice := mustConnect(t, e, "shared-id", nil, "alice", "a")
	alice.subscribeNotify()
	checkResponse(t, alice.do("KEYNOTIFY", "k"), "+OK\r\n", true)
	if _, ack, err := connectAs(t, e, "shared-id", nil, "bob", "b"); err == nil || connackCode(ack) != 0x86 {
		t.Fatalf("bob took over alice's client id: %v", err)
	}
	checkResponse(t, alice.do("GET", "k"), "$-1\r\n", false) // alice still connected
	if w := e.srv.Engine().Watchers([]byte("k")); len(w) != 1 {
		t.Fatalf("watchers %v", w)
	}
	// The same identity may take its id over (a reconnect).
	mustConnect(t, e, "shared-id", nil, "alice", "a")
	if _, ack, err := connectAs(t, e, "$statestore", nil, "alice", "a"); err == nil || connackCode(ack) != 0x86 {
		t.Fatalf("a client took the service's id: %v", err)
	}
}

// TestReservedClientIDsAreRefused reproduces issue #25: an MQTT client
// connected as the web console's client id ("ssgen-console") read the keys
// authorization rules grant the console, and the trace marked its
// requests as the console's. A reserved id is refused at CONNECT by the
// embedded broker; in external mode, where the other broker lets anyone
// connect, a request with a reserved __srcId is dropped.
func TestReservedClientIDsAreRefused(t *testing.T) {
	reserve := func(o *server.Options) { o.ReservedClientIDs = []string{"ssgen-console"} }
	t.Run("embedded", func(t *testing.T) {
		e := newEnv(t, "", []func(*server.Options){reserve})
		if _, ack, err := connectAs(t, e, "ssgen-console", nil, "", ""); err == nil || connackCode(ack) != 0x86 {
			t.Fatalf("a client connected with the console's id: %v", err)
		}
		c := e.connect("ssgen-console2") // a look-alike is an ordinary id
		checkResponse(t, c.do("GET", "k"), "$-1\r\n", false)
	})
	t.Run("mosquitto", func(t *testing.T) {
		seen := make(chan server.RequestEvent, 16)
		observe := func(o *server.Options) {
			o.OnRequest = func(ev *server.RequestEvent) { seen <- *ev }
		}
		e := newEnv(t, mosquittoURL(t), []func(*server.Options){reserve, observe})
		must(t, e.srv.Engine().Put([]byte("k"), []byte("v"), engine.PutOptions{}))
		c := e.connect("ssgen-console")
		c.send(request{payload: cmd("GET", "k")})
		var ev server.RequestEvent
		select {
		case ev = <-seen:
		case <-time.After(wait):
			t.Fatal("the request was never seen")
		}
		if ev.Client != "ssgen-console" || !ev.Dropped || ev.Exec || !strings.Contains(ev.Reason, "reserved") {
			t.Fatalf("request with the console's __srcId: %+v", ev)
		}
		select {
		case p := <-c.resp:
			t.Fatalf("answered: %q", p.Payload)
		default:
		}
	})
}
