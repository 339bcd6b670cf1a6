package runtime

import (
	"errors"
	"testing"
	"time"
)

func TestFromEnvReadsTheAIOVariables(t *testing.T) {
	env := map[string]string{
		"AIO_BROKER_HOSTNAME":     "aio-broker",
		"AIO_BROKER_TCP_PORT":     "18883",
		"AIO_MQTT_USE_TLS":        "true",
		"AIO_TLS_CA_FILE":         "/ca.pem",
		"AIO_TLS_CERT_FILE":       "/c.pem",
		"AIO_TLS_KEY_FILE":        "/k.pem",
		"AIO_SAT_FILE":            "/sat",
		"AIO_MQTT_CLIENT_ID":      "app-1",
		"AIO_MQTT_USERNAME":       "user",
		"AIO_MQTT_PASSWORD_FILE":  "/pw",
		"AIO_MQTT_KEEP_ALIVE":     "30",
		"AIO_MQTT_SESSION_EXPIRY": "600",
		"AIO_MQTT_CLEAN_START":    "1",
	}
	cfg, err := fromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Host: "aio-broker", Port: 18883, TLS: true, CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem",
		SATFile: "/sat", ClientID: "app-1", Username: "user", PasswordFile: "/pw",
		KeepAlive: 30 * time.Second, SessionExpiry: 600 * time.Second, CleanStart: true,
	}
	if cfg.Host != want.Host || cfg.Port != want.Port || cfg.TLS != want.TLS || cfg.CAFile != want.CAFile ||
		cfg.CertFile != want.CertFile || cfg.KeyFile != want.KeyFile || cfg.SATFile != want.SATFile ||
		cfg.ClientID != want.ClientID || cfg.Username != want.Username || cfg.PasswordFile != want.PasswordFile ||
		cfg.KeepAlive != want.KeepAlive || cfg.SessionExpiry != want.SessionExpiry || cfg.CleanStart != want.CleanStart {
		t.Errorf("FromEnv =\n%+v\nwant\n%+v", cfg, want)
	}
}

func TestFromEnvDefaultsAndRefusals(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		wantErr bool
		check   func(Config) bool
	}{
		{"host only: TLS on port 8883 like the SDKs", map[string]string{"AIO_BROKER_HOSTNAME": "h"}, false,
			func(c Config) bool { return c.TLS && c.Port == 8883 }},
		{"plain", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_MQTT_USE_TLS": "false", "AIO_BROKER_TCP_PORT": "1883"}, false,
			func(c Config) bool { return !c.TLS && c.Port == 1883 }},
		{"no host", map[string]string{"AIO_BROKER_TCP_PORT": "1883"}, true, nil},
		{"bad port", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_BROKER_TCP_PORT": "70000"}, true, nil},
		{"bad bool", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_MQTT_USE_TLS": "yes please"}, true, nil},
		{"keep-alive is seconds", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_MQTT_KEEP_ALIVE": "1m"}, true, nil},
		{"cert without key", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_TLS_CERT_FILE": "/c"}, true, nil},
		{"TLS files with TLS off", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_MQTT_USE_TLS": "false", "AIO_TLS_CA_FILE": "/ca"}, true, nil},
		{"encrypted key", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_TLS_KEY_PASSWORD_FILE": "/p"}, true, nil},
		{"empty variables count as unset", map[string]string{"AIO_BROKER_HOSTNAME": "h", "AIO_BROKER_TCP_PORT": ""}, false,
			func(c Config) bool { return c.Port == 8883 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := fromLookup(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("err = %v, want ErrInvalidArgument", err)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Fatalf("cfg %+v, err %v", cfg, err)
			}
		})
	}
}

func TestFromURL(t *testing.T) {
	cases := []struct {
		url      string
		host     string
		port     int
		tls      bool
		user, pw string
		clientID string
		wantErr  bool
	}{
		{url: "mqtt://localhost", host: "localhost", port: 1883},
		{url: "mqtt://127.0.0.1:41883", host: "127.0.0.1", port: 41883},
		{url: "mqtts://broker.example", host: "broker.example", port: 8883, tls: true},
		{url: "tcp://h:1", host: "h", port: 1},
		{url: "ssl://h", host: "h", port: 8883, tls: true},
		{url: "mqtt://[::1]:1884", host: "::1", port: 1884},
		{url: "mqtt://u:p%40ss@h?clientId=me", host: "h", port: 1883, user: "u", pw: "p@ss", clientID: "me"},
		{url: "http://h", wantErr: true},
		{url: "mqtt://", wantErr: true},
		{url: "mqtt://h:0", wantErr: true},
		{url: "mqtt://h:x", wantErr: true},
	}
	for _, tc := range cases {
		cfg, err := FromURL(tc.url)
		if tc.wantErr {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s: err = %v, want ErrInvalidArgument", tc.url, err)
			}
			continue
		}
		if err != nil || cfg.Host != tc.host || cfg.Port != tc.port || cfg.TLS != tc.tls ||
			cfg.Username != tc.user || string(cfg.Password) != tc.pw || cfg.ClientID != tc.clientID {
			t.Errorf("%s: %+v, %v", tc.url, cfg, err)
		}
	}
}

func TestDefaultsFillZeroFields(t *testing.T) {
	cfg, err := Config{Host: "h"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 1883 || cfg.Timeout != DefaultTimeout || cfg.ConnectTimeout != DefaultTimeout ||
		cfg.KeepAlive != DefaultKeepAlive || cfg.SessionExpiry != DefaultSessionExpiry ||
		cfg.WatchBuffer != DefaultWatchBuffer || cfg.Logger == nil || cfg.Now == nil || cfg.ClientID == "" {
		t.Errorf("defaults: %+v", cfg)
	}
	for _, bad := range []Config{
		{},
		{Host: "h", Port: 70000},
		{Host: "h", KeepAlive: 70000 * time.Second},
		{Host: "h", CertFile: "c"},
	} {
		if _, err := bad.withDefaults(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: err = %v, want ErrInvalidArgument", bad, err)
		}
	}
}
