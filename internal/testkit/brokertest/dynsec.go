package brokertest

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// Rules are what anonymous clients may do on a broker started with
// StartWithRules. They are enforced by mosquitto's dynamic security
// plugin, which, unlike an acl_file (that judges only what is delivered),
// also judges each SUBSCRIBE: a filter no Subscribe pattern covers gets
// SUBACK 0x87 (Not authorized), as under broker authorization rules.
type Rules struct {
	// Publish are the topic filters anonymous clients may publish to.
	Publish []string
	// Subscribe are the patterns of the filters they may subscribe to; a
	// wildcard in a subscription's filter is covered by the same wildcard
	// or a '#' in the pattern.
	Subscribe []string
}

// Where the plugin is looked for: Debian's and the upstream build's places.
var dynsecPlugins = []string{
	"/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so",
	"/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so",
	"/usr/lib/mosquitto_dynamic_security.so",
	"/usr/local/lib/mosquitto_dynamic_security.so",
}

// StartWithRules starts a broker on which anonymous clients may do what r
// allows, and nothing else. SetRules changes them while it runs.
func StartWithRules(t testing.TB, r Rules) *Broker {
	t.Helper()
	plugin := ""
	for _, p := range dynsecPlugins {
		if _, err := os.Stat(p); err == nil {
			plugin = p
			break
		}
	}
	if plugin == "" {
		if os.Getenv("SSGEN_REQUIRE_MOSQUITTO") == "1" {
			t.Fatalf("brokertest: mosquitto's dynamic security plugin not found (SSGEN_REQUIRE_MOSQUITTO=1)")
		}
		t.Skip("brokertest: mosquitto's dynamic security plugin not found")
	}
	return start(t, "", &dynsec{plugin: plugin, rules: r, adminPW: rand.Text()})
}

// dynsec is a broker's dynamic security configuration: the anonymous
// clients' rules, and an administrator that SetRules connects as.
type dynsec struct {
	plugin  string
	rules   Rules
	adminPW string
}

const (
	dynAdmin     = "brokertest-admin"
	dynRole      = "anonymous-rules"
	dynGroup     = "anonymous"
	dynControl   = "$CONTROL/dynamic-security/v1"
	dynResponses = dynControl + "/response"
)

type dynACL struct {
	Type  string `json:"acltype"`
	Topic string `json:"topic"`
	Allow bool   `json:"allow"`
}

func (d *dynsec) acls() []dynACL {
	var acls []dynACL
	for _, f := range d.rules.Publish {
		acls = append(acls, dynACL{"publishClientSend", f, true})
	}
	for _, f := range d.rules.Subscribe {
		acls = append(acls, dynACL{"subscribePattern", f, true})
	}
	return acls
}

// config writes the plugin's file for the current rules into dir and
// returns the mosquitto.conf lines that load it.
func (d *dynsec) config(dir string) (string, error) {
	salt := make([]byte, 12) // the plugin's salt length
	_, _ = rand.Read(salt)
	hash, err := pbkdf2.Key(sha512.New, d.adminPW, salt, 101, sha512.Size)
	if err != nil {
		return "", err
	}
	type roleRef struct {
		Name string `json:"rolename"`
	}
	cfg := map[string]any{
		"defaultACLAccess": map[string]bool{"publishClientSend": false, "publishClientReceive": true, "subscribe": false, "unsubscribe": true},
		"clients": []map[string]any{{
			"username": dynAdmin, "password": base64.StdEncoding.EncodeToString(hash),
			"salt": base64.StdEncoding.EncodeToString(salt), "iterations": 101,
			"roles": []roleRef{{"admin"}},
		}},
		"groups": []map[string]any{{"groupname": dynGroup, "roles": []roleRef{{dynRole}}}},
		"roles": []map[string]any{
			{"rolename": dynRole, "acls": d.acls()},
			{"rolename": "admin", "acls": []dynACL{
				{"publishClientSend", dynControl + "/#", true},
				{"subscribePattern", dynControl + "/#", true},
				{"publishClientReceive", dynControl + "/#", true}, // the plugin's answers
			}},
		},
		"anonymousGroup": dynGroup,
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "dynamic-security.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return "plugin " + d.plugin + "\nplugin_opt_config_file " + path + "\n", nil
}

// SetRules replaces the anonymous clients' rules of a broker started with
// StartWithRules, live (through the plugin's control topic; it returns
// once the plugin has answered) when the broker runs, and for every later
// Restart. The plugin disconnects the anonymous clients (their role was
// replaced); each reconnects under the new rules.
func (b *Broker) SetRules(r Rules) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dyn == nil {
		b.t.Fatalf("brokertest: SetRules needs a broker started with StartWithRules")
	}
	b.dyn.rules = r
	if b.proc == nil {
		return
	}
	if err := b.dyn.apply(b.Addr()); err != nil {
		b.t.Fatalf("brokertest: SetRules: %v", err)
	}
}

// apply sends the rules to the running broker's plugin and checks its
// answer: the anonymous clients' role is replaced by one with the rules.
func (d *dynsec) apply(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	answers := make(chan []byte, 1)
	pc := paho.NewClient(paho.ClientConfig{
		Conn: nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			select {
			case answers <- pr.Packet.Payload:
			default:
			}
			return true, nil
		}},
	})
	if _, err := pc.Connect(ctx, &paho.Connect{
		ClientID: "brokertest-admin-" + rand.Text(), CleanStart: true,
		Username: dynAdmin, UsernameFlag: true, Password: []byte(d.adminPW), PasswordFlag: true,
	}); err != nil {
		_ = nc.Close()
		return fmt.Errorf("connect as the administrator: %w", err)
	}
	defer func() { _ = pc.Disconnect(&paho.Disconnect{}) }()
	if _, err := pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: dynResponses, QoS: 1}}}); err != nil {
		return err
	}
	cmds := map[string]any{"commands": []map[string]any{
		{"command": "deleteRole", "rolename": dynRole},
		{"command": "createRole", "rolename": dynRole, "acls": d.acls()},
		{"command": "addGroupRole", "groupname": dynGroup, "rolename": dynRole},
	}}
	payload, err := json.Marshal(cmds)
	if err != nil {
		return err
	}
	if _, err := pc.Publish(ctx, &paho.Publish{Topic: dynControl, QoS: 1, Payload: payload}); err != nil {
		return err
	}
	var answer []byte
	select {
	case answer = <-answers:
	case <-ctx.Done():
		return errors.New("no answer from the dynamic security plugin")
	}
	var resp struct {
		Responses []struct {
			Command string `json:"command"`
			Error   string `json:"error"`
		} `json:"responses"`
	}
	if err := json.Unmarshal(answer, &resp); err != nil {
		return fmt.Errorf("answer %q: %w", answer, err)
	}
	for _, r := range resp.Responses {
		if r.Error != "" {
			return fmt.Errorf("%s: %s", r.Command, r.Error)
		}
	}
	return nil
}
