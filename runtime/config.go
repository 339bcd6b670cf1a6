package runtime

import (
	"crypto/tls"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// Defaults applied by Dial to zero Config fields.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultKeepAlive     = 60 * time.Second
	DefaultSessionExpiry = time.Hour
	DefaultReconnectMin  = 100 * time.Millisecond
	DefaultReconnectMax  = 30 * time.Second
	DefaultWatchBuffer   = 64
	// DefaultStableAfter is how long a connection must last before a drop
	// counts as a fresh failure rather than a continuation of a streak.
	DefaultStableAfter = 10 * time.Second
)

// Config says how to reach and authenticate with the MQTT broker that hosts
// the state store. Zero values take the defaults above.
type Config struct {
	Host string
	Port int // 1883 plain, 8883 TLS when 0
	TLS  bool
	// CAFile is a PEM bundle that replaces the system roots. CertFile and
	// KeyFile are a client certificate and its key (both or neither).
	CAFile, CertFile, KeyFile string
	// TLSConfig, when set, is cloned and used as the base TLS settings.
	TLSConfig *tls.Config

	// SATFile holds a Kubernetes service account token; when set the
	// client authenticates with MQTT enhanced authentication, method
	// "K8S-SAT", the file's contents as data, re-read on every connect.
	SATFile string

	// ClientID is the MQTT client id; a random one is generated when empty.
	// It is also the HLC node id and the __srcId of every request.
	ClientID string
	Username string
	// PasswordFile is re-read on every connect so rotated secrets apply.
	PasswordFile string
	// Password is used when PasswordFile is empty.
	Password []byte

	KeepAlive time.Duration
	// SessionExpiry keeps the MQTT session (subscriptions, unacknowledged
	// messages) across a dropped connection. Negative means 0 (no session
	// kept; every reconnect is treated as a lost session).
	SessionExpiry time.Duration
	// CleanStart applies to the first connection only; reconnections always
	// resume the session.
	CleanStart bool

	// Timeout bounds every request that has no earlier context deadline,
	// and sets the request's MQTT Message Expiry (rounded up to seconds).
	Timeout time.Duration
	// ConnectTimeout bounds each connection attempt (Timeout by default).
	ConnectTimeout time.Duration
	// DialOnce makes Dial return the first connection attempt's failure
	// at once: a refused connection, a broker that closes it, a failed
	// handshake. By default Dial retries such transient failures until
	// ConnectTimeout, which suits a service that may start before its
	// broker; a command a person runs wants the answer now. Reconnections
	// after a connection was made are not affected.
	DialOnce bool
	// NoServiceWait, when positive, fails a request with ErrNoService
	// once the broker has kept answering it "no matching subscribers"
	// (PUBACK 0x10: no state store is attached to it) for this long. By
	// default such a request is sent again until its timeout, which suits
	// a program that may start before its external state store; a command
	// a person runs wants to hear at once that nothing will answer. A
	// Lease's renewal that fails this way is tried again until the
	// lease's deadline, as after a timeout.
	NoServiceWait time.Duration
	// ReconnectMin and ReconnectMax bound the reconnect backoff.
	ReconnectMin, ReconnectMax time.Duration
	// StableAfter is how long a connection must live for its loss to reset
	// the backoff; shorter-lived ones (a client-id takeover, a broker that
	// accepts then kicks) keep backing off.
	StableAfter time.Duration

	// WatchBuffer is each watcher's event buffer; a watcher that lets it
	// fill up gets one Resync event instead of the events it missed.
	WatchBuffer int
	// NotifyWithoutSubscription says the broker delivers notifications
	// into the client's session whether or not it holds a subscription to
	// its notification topic, as the Azure IoT Operations broker and ssgen
	// serve's embedded broker do. Watches then work even when the broker
	// refuses that subscription (the client still asks for it and logs the
	// refusal); by default they fail with ErrNotificationsUnavailable,
	// since a broker that routes only to subscribers, mosquitto for one,
	// would drop every notification.
	NotifyWithoutSubscription bool
	// MaxDrift is how far ahead of the local clock a received __ts may be
	// (one minute by default, as in the official clients).
	MaxDrift time.Duration

	// Logger receives connection events and anomalies; nil discards them.
	Logger *slog.Logger
	// Now is the physical clock of the client's HLC (time.Now by default).
	Now func() time.Time

	// requestProps, set only by this package's tests, adds user
	// properties to the request with this payload: the fault vocabulary
	// of ssgen serve --fault-injection, which drives the reconnect and
	// resync paths against the real server.
	requestProps func(payload []byte) []paho.UserProperty
}

// FromEnv reads the AIO_* variables the official SDKs read:
//
//	AIO_BROKER_HOSTNAME      host (required)
//	AIO_BROKER_TCP_PORT      port (default 8883)
//	AIO_MQTT_USE_TLS         bool (default true)
//	AIO_TLS_CA_FILE          PEM CA bundle
//	AIO_TLS_CERT_FILE        client certificate (with AIO_TLS_KEY_FILE)
//	AIO_TLS_KEY_FILE         client key
//	AIO_SAT_FILE             service account token file (K8S-SAT auth)
//	AIO_MQTT_CLIENT_ID       client id
//	AIO_MQTT_USERNAME        user name
//	AIO_MQTT_PASSWORD_FILE   password file
//	AIO_MQTT_KEEP_ALIVE      seconds
//	AIO_MQTT_SESSION_EXPIRY  seconds
//	AIO_MQTT_CLEAN_START     bool
//
// Booleans use strconv.ParseBool. Errors match ErrInvalidArgument.
func FromEnv() (Config, error) { return fromLookup(os.LookupEnv) }

func fromLookup(lookup func(string) (string, bool)) (Config, error) {
	cfg := Config{TLS: true}
	get := func(k string) (string, bool) {
		v, ok := lookup(k)
		return v, ok && v != ""
	}
	var err error
	host, _ := get("AIO_BROKER_HOSTNAME")
	if host == "" {
		return Config{}, invalidArg("AIO_BROKER_HOSTNAME is not set")
	}
	cfg.Host = host
	cfg.Port = 8883
	if v, ok := get("AIO_BROKER_TCP_PORT"); ok {
		p, perr := strconv.ParseUint(v, 10, 16)
		if perr != nil || p == 0 {
			return Config{}, invalidArg("AIO_BROKER_TCP_PORT=%q is not a port", v)
		}
		cfg.Port = int(p)
	}
	if v, ok := get("AIO_MQTT_USE_TLS"); ok {
		if cfg.TLS, err = strconv.ParseBool(v); err != nil {
			return Config{}, invalidArg("AIO_MQTT_USE_TLS=%q is not a boolean", v)
		}
	}
	cfg.CAFile, _ = get("AIO_TLS_CA_FILE")
	cfg.CertFile, _ = get("AIO_TLS_CERT_FILE")
	cfg.KeyFile, _ = get("AIO_TLS_KEY_FILE")
	if _, ok := get("AIO_TLS_KEY_PASSWORD_FILE"); ok {
		return Config{}, invalidArg("AIO_TLS_KEY_PASSWORD_FILE: encrypted client keys are not supported")
	}
	cfg.SATFile, _ = get("AIO_SAT_FILE")
	cfg.ClientID, _ = get("AIO_MQTT_CLIENT_ID")
	cfg.Username, _ = get("AIO_MQTT_USERNAME")
	cfg.PasswordFile, _ = get("AIO_MQTT_PASSWORD_FILE")
	if v, ok := get("AIO_MQTT_KEEP_ALIVE"); ok {
		s, perr := strconv.ParseUint(v, 10, 16)
		if perr != nil {
			return Config{}, invalidArg("AIO_MQTT_KEEP_ALIVE=%q is not a number of seconds", v)
		}
		cfg.KeepAlive = time.Duration(s) * time.Second
	}
	if v, ok := get("AIO_MQTT_SESSION_EXPIRY"); ok {
		s, perr := strconv.ParseUint(v, 10, 32)
		if perr != nil {
			return Config{}, invalidArg("AIO_MQTT_SESSION_EXPIRY=%q is not a number of seconds", v)
		}
		cfg.SessionExpiry = time.Duration(s) * time.Second
	}
	if v, ok := get("AIO_MQTT_CLEAN_START"); ok {
		if cfg.CleanStart, err = strconv.ParseBool(v); err != nil {
			return Config{}, invalidArg("AIO_MQTT_CLEAN_START=%q is not a boolean", v)
		}
	}
	return cfg, cfg.validateTLS()
}

// FromURL reads a broker URL: mqtt://host[:port] (plain, port 1883) or
// mqtts://host[:port] (TLS, port 8883); tcp://, ssl:// and tls:// are
// accepted as aliases. User info sets Username and Password; the query
// parameter clientId sets ClientID.
func FromURL(rawURL string) (Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Config{}, invalidArg("broker URL: %v", err)
	}
	var cfg Config
	switch u.Scheme {
	case "mqtt", "tcp":
		cfg.Port = 1883
	case "mqtts", "ssl", "tls":
		cfg.TLS, cfg.Port = true, 8883
	default:
		return Config{}, invalidArg("broker URL %q: scheme must be mqtt or mqtts", rawURL)
	}
	cfg.Host = u.Hostname()
	if cfg.Host == "" {
		return Config{}, invalidArg("broker URL %q has no host", rawURL)
	}
	if p := u.Port(); p != "" {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return Config{}, invalidArg("broker URL %q: bad port", rawURL)
		}
		cfg.Port = int(n)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			cfg.Password = []byte(pw)
		}
	}
	cfg.ClientID = u.Query().Get("clientId")
	return cfg, nil
}

// withDefaults fills zero fields and checks the rest.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Host == "" {
		return cfg, invalidArg("Config.Host is empty")
	}
	if cfg.Port == 0 {
		cfg.Port = 1883
		if cfg.TLS {
			cfg.Port = 8883
		}
	}
	if cfg.Port < 0 || cfg.Port > math.MaxUint16 {
		return cfg, invalidArg("Config.Port %d is out of range", cfg.Port)
	}
	if err := cfg.validateTLS(); err != nil {
		return cfg, err
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "ssgen-" + randomHex(8)
	}
	switch {
	case cfg.KeepAlive == 0:
		cfg.KeepAlive = DefaultKeepAlive
	case cfg.KeepAlive < 0 || cfg.KeepAlive > math.MaxUint16*time.Second:
		return cfg, invalidArg("Config.KeepAlive %s is out of range", cfg.KeepAlive)
	case cfg.KeepAlive < time.Second: // whole seconds on the wire; 0 would turn it off
		cfg.KeepAlive = time.Second
	}
	switch {
	case cfg.SessionExpiry == 0:
		cfg.SessionExpiry = DefaultSessionExpiry
	case cfg.SessionExpiry > math.MaxUint32*time.Second:
		return cfg, invalidArg("Config.SessionExpiry %s is out of range", cfg.SessionExpiry)
	}
	defaultDur(&cfg.Timeout, DefaultTimeout)
	defaultDur(&cfg.ConnectTimeout, cfg.Timeout)
	defaultDur(&cfg.ReconnectMin, DefaultReconnectMin)
	defaultDur(&cfg.ReconnectMax, DefaultReconnectMax)
	defaultDur(&cfg.StableAfter, DefaultStableAfter)
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = cfg.ReconnectMin
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = DefaultWatchBuffer
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg, nil
}

func defaultDur(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

func (cfg Config) validateTLS() error {
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return invalidArg("a client certificate file and key file must be given together")
	}
	if !cfg.TLS && (cfg.CAFile != "" || cfg.CertFile != "" || cfg.TLSConfig != nil) {
		return invalidArg("TLS files given but TLS is off")
	}
	return nil
}

// addr is host:port for net.Dial.
func (cfg Config) addr() string { return net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)) }
