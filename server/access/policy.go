package access

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

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
	// resolves counts grantsFor calls and principalWork the principal
	// glob matching done by them and by allows, in glob.Pattern.Cost
	// units (tests check that work is done once per connection).
	resolves, principalWork atomic.Int64
}

type rule struct {
	clientIDs, usernames, certNames []*glob.Pattern
	resources                       []resource
}

type resource struct {
	glob   *glob.Pattern // keyType pattern; nil for the others
	exact  []byte        // keyType string, binary or hex
	access access
	every  bool // keyType pattern, key "*": every key
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
					rs.every = k == "*"
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

// Identity is who sent a request, as far as the broker verified it.
type Identity struct {
	clientID  string
	username  string   // empty unless checked against the password file
	certNames []string // empty unless the certificate was verified
}

// same reports whether two identities are the same principal: equal
// verified user names and equal certificate names.
func (id *Identity) same(o *Identity) bool {
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

// names reports whether r names id, adding the matching cost to work.
// A name longer than MaxIdentityBytes matches nothing (CONNECT refuses
// such client ids and user names; see MaxIdentityBytes).
func (r *rule) names(id *Identity, work *int) bool {
	if anyGlob(r.clientIDs, id.clientID, work) {
		return true
	}
	if id.username != "" && anyGlob(r.usernames, id.username, work) {
		return true
	}
	for _, n := range id.certNames {
		if anyGlob(r.certNames, n, work) {
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

func anyGlob(globs []*glob.Pattern, s string, work *int) bool {
	if len(s) > MaxIdentityBytes {
		return false
	}
	for _, g := range globs {
		*work += g.Cost(len(s))
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
func (p *Policy) allows(id *Identity, key []byte, need access) bool {
	work := 0
	defer func() { p.principalWork.Add(int64(work)) }()
	for i := range p.rules {
		r := &p.rules[i]
		if !r.names(id, &work) {
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

// MaxIdentityBytes bounds each name of an identity that authorization
// rules are matched against: under a Policy, a CONNECT whose client id or
// user name is longer is refused (CONNACK 0x85, Client Identifier not
// valid, or 0x86, Bad User Name or Password), and a certificate name that
// is longer matches no rule. Names in the field are far shorter (a DNS
// name is at most 253 bytes); without the bound a client id of 60 KiB
// made every rule's principal globs cost 60 KiB of matching each time.
const MaxIdentityBytes = 1024

// Grants is what a Policy grants one identity: the rules that name it
// and their resources by access, resolved once (per connection, by the
// server) instead of matching every rule's principal globs
// against the identity for every key a request touches.
type Grants struct {
	pol    *Policy
	naming []int // 1-based positions of the rules that name the identity
	read   []*resource
	write  []*resource
	// readWords and readExact give readCost: the read globs' summed
	// Cost(0), and the number of exact read keys.
	readWords, readExact int
	who                  string // for explain
	// scope is engine.Request.TokenScope: the rules that name the
	// identity, so a SCAN token moves only between identities that may
	// read the same keys.
	scope string
}

// GrantsFor resolves which rules name id. Its cost is one pass of each
// rule's principal globs over each of id's names, which MaxIdentityBytes
// bounds.
func (p *Policy) GrantsFor(id *Identity) *Grants {
	g := &Grants{pol: p, who: describe(id)}
	work := 0
	defer func() { p.resolves.Add(1); p.principalWork.Add(int64(work)) }()
	for i := range p.rules {
		r := &p.rules[i]
		if !r.names(id, &work) {
			continue
		}
		g.naming = append(g.naming, i+1)
		g.scope += strconv.Itoa(i+1) + ","
		for j := range r.resources {
			rs := &r.resources[j]
			if rs.access&accessRead != 0 {
				g.read = append(g.read, rs)
				if rs.glob != nil {
					g.readWords += rs.glob.Cost(0)
				} else {
					g.readExact++
				}
			}
			if rs.access&accessWrite != 0 {
				g.write = append(g.write, rs)
			}
		}
	}
	g.scope = "authz:" + g.scope
	return g
}

// Policy is the policy g was resolved from.
func (g *Grants) Policy() *Policy { return g.pol }

// Scope is engine.Request.TokenScope for the identity: the rules that
// name it.
func (g *Grants) Scope() string { return g.scope }

// allows reports whether the identity has need on key.
func (g *Grants) allows(key []byte, need access) bool {
	list := g.read
	if need == accessWrite {
		list = g.write
	}
	for _, rs := range list {
		if rs.covers(key) {
			return true
		}
	}
	return false
}

// MayRead is the SCAN listing rule (engine.Request.Visible).
func (g *Grants) MayRead(key []byte) bool { return g.allows(key, accessRead) }

// ReadCost is what MayRead costs for a key of n bytes, in the units of
// glob.Pattern.Cost (engine.Request.VisibleCost): each read glob costs
// its Cost(n), each exact key one unit, and every key at least one, so
// that a SCAN's budget counts examined keys × rules.
func (g *Grants) ReadCost(n int) int {
	return max(g.readWords*(n+1)+g.readExact, 1)
}

// permits decides a decoded request for the identity (see Policy.permits).
func (g *Grants) permits(args [][]byte) bool {
	need, key, check := needOf(args)
	return !check || g.allows(key, need)
}

// Refusal decides a decoded request as permits does: "" when it is
// allowed, else why it is not (explain).
func (g *Grants) Refusal(args [][]byte) string {
	need, key, check := needOf(args)
	if !check || g.allows(key, need) {
		return ""
	}
	return g.explain(need)
}

// needOf is the access a decoded request needs on its key; check is
// false when it needs none from the rules: SCAN (it lists only the keys
// the identity may read), and requests whose verb or key the engine will
// refuse anyway (unknown verb, too few arguments, empty key), which are
// let through so that the engine's own error comes first.
func needOf(args [][]byte) (need access, key []byte, check bool) {
	if len(args) == 0 {
		return 0, nil, false
	}
	switch string(args[0]) {
	case protocol.VerbGet, protocol.VerbKeyNotify:
		need = accessRead
	case protocol.VerbSet, protocol.VerbDel, protocol.VerbVDel:
		need = accessWrite
	default:
		return 0, nil, false
	}
	if len(args) < 2 || len(args[1]) == 0 {
		return 0, nil, false
	}
	return need, args[1], true
}

// permits decides a decoded request. Requests whose verb or key the
// engine will refuse anyway (unknown verb, too few arguments, empty key)
// are let through so that the engine's own error comes first.
func (p *Policy) permits(id *Identity, args [][]byte) bool {
	return p.GrantsFor(id).permits(args)
}

// explain says why the identity lacks need on a key: which rules name
// it (by their 1-based position in the file) and that none of them
// grants that access on the key. It runs only for a refusal.
func (g *Grants) explain(need access) string {
	what := "Read"
	if need == accessWrite {
		what = "Write"
	}
	naming := make([]string, len(g.naming))
	for i, n := range g.naming {
		naming[i] = strconv.Itoa(n)
	}
	switch len(naming) {
	case 0:
		return "no authorization rule names " + g.who
	case 1:
		return "rule " + naming[0] + " names " + g.who + " but grants no " + what + " on this key"
	}
	return "rules " + strings.Join(naming, ", ") + " name " + g.who + " but none grants " + what + " on this key"
}

// describe names an identity in a refusal's reason, each name quoted and
// clipped (a reason is kept in logs and the console's trace).
func describe(id *Identity) string {
	who := "client " + quoteClipped(id.clientID)
	if id.username != "" {
		who += ", user " + quoteClipped(id.username)
	}
	if len(id.certNames) > 0 {
		who += ", certificate " + quoteClipped(id.certNames[0])
	}
	return who
}

// quoteClipped quotes s, cut to its first 64 bytes (marked with "...").
func quoteClipped(s string) string {
	const most = 64
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:most], "")) + "..."
}

// Work says how many times p resolved an identity's grants (once per
// connection), and the principal glob matching that took in all, in
// glob.Pattern.Cost units.
func (p *Policy) Work() (resolves, work int64) {
	return p.resolves.Load(), p.principalWork.Load()
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

func (pr Principal) Identity() Identity {
	return Identity{clientID: pr.ClientID, username: pr.Username, certNames: pr.CertificateNames}
}

// MayRead reports whether pr may read key (GET, KEYNOTIFY, SCAN listing).
func (p *Policy) MayRead(pr Principal, key []byte) bool {
	id := pr.Identity()
	return p.allows(&id, key, accessRead)
}

// MayWriteEvery reports whether a rule that names pr grants it write on
// every key: a stateStoreResources entry of keyType pattern whose keys
// include "*" with method Write or ReadWrite. Operations that affect
// every key alike (the chaos rules and the manual clock of ssgen serve's
// HTTP API) need it.
func (p *Policy) MayWriteEvery(pr Principal) bool {
	id := pr.Identity()
	work := 0
	defer func() { p.principalWork.Add(int64(work)) }()
	for i := range p.rules {
		r := &p.rules[i]
		if !r.names(&id, &work) {
			continue
		}
		for j := range r.resources {
			if rs := &r.resources[j]; rs.every && rs.access&accessWrite != 0 {
				return true
			}
		}
	}
	return false
}

// MayWrite reports whether pr may write key (SET, DEL, VDEL).
func (p *Policy) MayWrite(pr Principal, key []byte) bool {
	id := pr.Identity()
	return p.allows(&id, key, accessWrite)
}
