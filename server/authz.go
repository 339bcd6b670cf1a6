package server

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/internal/protocol"
)

// ErrPolicy wraps every problem found in an authorization file.
var ErrPolicy = errors.New("server: authorization policy")

// access is what a rule grants on its keys.
type access uint8

const (
	accessRead access = 1 << iota
	accessWrite
)

// Policy is a set of state store authorization rules. A request is
// allowed when at least one rule both names its client and grants the
// access the command needs on its key; everything else is denied.
type Policy struct {
	rules []rule
}

type rule struct {
	clientIDs, usernames, certNames []*glob.Pattern
	resources                       []resource
}

type resource struct {
	glob   *glob.Pattern // keyType pattern; nil for the others
	exact  []byte        // keyType string, binary or hex
	access access
}

// policyFile is the YAML form. Its shape follows the real broker's
// BrokerAuthorization rules (principals, stateStoreResources with keyType,
// keys and method), plus certificateNames.
type policyFile struct {
	Rules []struct {
		Principals struct {
			ClientIDs        []string `yaml:"clientIds"`
			Usernames        []string `yaml:"usernames"`
			CertificateNames []string `yaml:"certificateNames"`
		} `yaml:"principals"`
		StateStoreResources []struct {
			KeyType string   `yaml:"keyType"`
			Keys    []string `yaml:"keys"`
			Method  string   `yaml:"method"`
		} `yaml:"stateStoreResources"`
	} `yaml:"rules"`
}

// LoadPolicy reads an authorization file; see ParsePolicy.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	return ParsePolicy(b)
}

// ParsePolicy reads the YAML authorization format:
//
//	rules:
//	  - principals:              # who: any entry matching is enough
//	      clientIds: ["sensor-*"]
//	      usernames: ["alice"]
//	      certificateNames: ["gateway.example.com"]
//	    stateStoreResources:     # which keys, with what access
//	      - keyType: pattern     # pattern (glob), string (exact), binary (base64), hex
//	        keys: ["sensors/*"]
//	        method: ReadWrite    # Read, Write or ReadWrite
//
// Principal entries are globs ('*', '?', "[a-z]") on the MQTT client id,
// the user name (only when verified by the password file) and the names
// of a verified client certificate (common name and subject alternative
// names). A rule with no principal applies to nobody. keyType and method
// are case-insensitive. Unknown fields are errors, so that a typo does not
// silently widen or narrow access.
func ParsePolicy(data []byte) (*Policy, error) {
	var f policyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	p := &Policy{}
	for i, fr := range f.Rules {
		r := rule{clientIDs: compileAll(fr.Principals.ClientIDs), usernames: compileAll(fr.Principals.Usernames), certNames: compileAll(fr.Principals.CertificateNames)}
		for j, res := range fr.StateStoreResources {
			var acc access
			switch strings.ToLower(res.Method) {
			case "read":
				acc = accessRead
			case "write":
				acc = accessWrite
			case "readwrite":
				acc = accessRead | accessWrite
			default:
				return nil, fmt.Errorf("%w: rule %d resource %d: method %q: want Read, Write or ReadWrite", ErrPolicy, i+1, j+1, res.Method)
			}
			for _, k := range res.Keys {
				rs := resource{access: acc}
				var err error
				switch strings.ToLower(res.KeyType) {
				case "pattern":
					rs.glob = glob.Compile(k)
				case "string":
					rs.exact = []byte(k)
				case "binary":
					rs.exact, err = base64.StdEncoding.DecodeString(k)
				case "hex":
					rs.exact, err = hex.DecodeString(k)
				default:
					return nil, fmt.Errorf("%w: rule %d resource %d: keyType %q: want pattern, string, binary or hex", ErrPolicy, i+1, j+1, res.KeyType)
				}
				if err != nil {
					return nil, fmt.Errorf("%w: rule %d resource %d: key %q: %v", ErrPolicy, i+1, j+1, k, err)
				}
				r.resources = append(r.resources, rs)
			}
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// identity is who sent a request, as far as the broker verified it.
type identity struct {
	clientID  string
	username  string   // empty unless checked against the password file
	certNames []string // empty unless the certificate was verified
}

// same reports whether two identities are the same principal: equal
// verified user names and equal certificate names.
func (id *identity) same(o *identity) bool {
	if id.username != o.username || len(id.certNames) != len(o.certNames) {
		return false
	}
	for i := range id.certNames {
		if id.certNames[i] != o.certNames[i] {
			return false
		}
	}
	return true
}

func (r *rule) names(id *identity) bool {
	if anyGlob(r.clientIDs, id.clientID) {
		return true
	}
	if id.username != "" && anyGlob(r.usernames, id.username) {
		return true
	}
	for _, n := range id.certNames {
		if anyGlob(r.certNames, n) {
			return true
		}
	}
	return false
}

// compileAll compiles the globs of a principal list once, when the
// policy is read (matching then costs one pass over the name).
func compileAll(globs []string) []*glob.Pattern {
	ps := make([]*glob.Pattern, len(globs))
	for i, g := range globs {
		ps[i] = glob.Compile(g)
	}
	return ps
}

func anyGlob(globs []*glob.Pattern, s string) bool {
	for _, g := range globs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

func (rs *resource) covers(key []byte) bool {
	if rs.glob != nil {
		return rs.glob.Match(string(key))
	}
	return bytes.Equal(rs.exact, key)
}

// allows reports whether id has need on key.
func (p *Policy) allows(id *identity, key []byte, need access) bool {
	for i := range p.rules {
		r := &p.rules[i]
		if !r.names(id) {
			continue
		}
		for j := range r.resources {
			if rs := &r.resources[j]; rs.access&need == need && rs.covers(key) {
				return true
			}
		}
	}
	return false
}

// permits decides a decoded request. Requests whose verb or key the
// engine will refuse anyway (unknown verb, too few arguments, empty key)
// are let through so that the engine's own error comes first.
func (p *Policy) permits(id *identity, args [][]byte) bool {
	if len(args) == 0 {
		return true
	}
	var need access
	switch string(args[0]) {
	case protocol.VerbScan:
		return true // it lists only the keys id may read (inbound.Readable)
	case protocol.VerbGet, protocol.VerbKeyNotify:
		need = accessRead
	case protocol.VerbSet, protocol.VerbDel, protocol.VerbVDel:
		need = accessWrite
	default:
		return true
	}
	if len(args) < 2 || len(args[1]) == 0 {
		return true
	}
	return p.allows(id, args[1], need)
}

// refusal decides a decoded request as permits does: "" when it is
// allowed, else why it is not (explain).
func (p *Policy) refusal(id *identity, args [][]byte) string {
	if p.permits(id, args) {
		return ""
	}
	need := accessWrite
	if v := string(args[0]); v == protocol.VerbGet || v == protocol.VerbKeyNotify {
		need = accessRead
	}
	return p.explain(id, args[1], need)
}

// explain says why id lacks need on key: which rules name it (by their
// 1-based position in the file) and that none of them grants that access
// on the key. It runs only for a refusal.
func (p *Policy) explain(id *identity, key []byte, need access) string {
	what := "Read"
	if need == accessWrite {
		what = "Write"
	}
	who := "client " + strconv.Quote(id.clientID)
	if id.username != "" {
		who += ", user " + strconv.Quote(id.username)
	}
	if len(id.certNames) > 0 {
		who += ", certificate " + strconv.Quote(id.certNames[0])
	}
	var naming []string
	for i := range p.rules {
		if p.rules[i].names(id) {
			naming = append(naming, strconv.Itoa(i+1))
		}
	}
	switch len(naming) {
	case 0:
		return "no authorization rule names " + who
	case 1:
		return "rule " + naming[0] + " names " + who + " but grants no " + what + " on this key"
	}
	return "rules " + strings.Join(naming, ", ") + " name " + who + " but none grants " + what + " on this key"
}

// Principal is who a request is made as, in the terms of a Policy's
// principals: a client id, a user name verified by the password file, and
// the names of a verified client certificate. Tools that act for someone
// (the web console) judge keys with it.
type Principal struct {
	ClientID         string
	Username         string
	CertificateNames []string
}

func (pr Principal) identity() identity {
	return identity{clientID: pr.ClientID, username: pr.Username, certNames: pr.CertificateNames}
}

// MayRead reports whether pr may read key (GET, KEYNOTIFY, SCAN listing).
func (p *Policy) MayRead(pr Principal, key []byte) bool {
	id := pr.identity()
	return p.allows(&id, key, accessRead)
}

// MayWrite reports whether pr may write key (SET, DEL, VDEL).
func (p *Policy) MayWrite(pr Principal, key []byte) bool {
	id := pr.identity()
	return p.allows(&id, key, accessWrite)
}
