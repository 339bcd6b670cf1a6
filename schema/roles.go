package schema

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ssgen/ssgen/internal/suggest"
)

// Role is a set of clients, named by MQTT client id, user name or
// attributes, and what they may do with the schema's keys and locks.
// `ssgen authz` turns roles into the broker's authorization rules; a
// client no role names may do nothing.
type Role struct {
	Name       string
	Doc        string
	ClientIDs  []string     // MQTT client ids; '*' and '?' are wildcards
	Usernames  []string     // authenticated user names; '*' and '?' are wildcards
	Attributes []Attributes // sets of authentication attributes, each matched as a whole
	Grants     []*Grant     // read, then write, then lock, each in written order
	Pos        Pos

	s *Schema
}

func (r *Role) schema() *Schema { return r.s }

// Attribute is one name: value pair a client's authentication carries
// (an X.509 certificate attribute, a service account annotation).
type Attribute struct {
	Name, Value string
}

// Attributes is a set of attributes a client must all carry.
type Attributes []Attribute

// Verb is what a grant allows.
type Verb int

const (
	// VerbRead allows GET and KEYNOTIFY (watching) of keys, and seeing who
	// holds a lock.
	VerbRead Verb = iota
	// VerbWrite allows SET, DEL and VDEL of keys.
	VerbWrite
	// VerbLock allows taking, renewing and releasing a lock, which reads,
	// watches and writes the lock's key.
	VerbLock
)

var verbNames = [...]string{"read", "write", "lock"}

// String is the verb's field name in the schema: read, write or lock.
func (v Verb) String() string { return verbNames[v] }

// Grant is one entry of a role's read, write or lock list: a group (all
// its keys, or for lock all its locks), a key or a lock.
type Grant struct {
	Verb  Verb
	Name  string // as written: "Group", "Group.Key", "Key"
	Group *Group // set when the grant names a group
	Key   *Key   // set when it names a key
	Lock  *Lock  // set when it names a lock
	Pos   Pos
}

// Access is what a role may do with one stored key: read it, write it or
// both. The state store checks it per request: GET and KEYNOTIFY read,
// SET, DEL and VDEL write, and SCAN lists only what may be read.
type Access uint8

const (
	AccessRead Access = 1 << iota
	AccessWrite
	AccessReadWrite = AccessRead | AccessWrite
)

// String is the broker's method name of the access: Read, Write or
// ReadWrite.
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "Read"
	case AccessWrite:
		return "Write"
	case AccessReadWrite:
		return "ReadWrite"
	}
	return "None"
}

// Permission is a role's access to the keys of one declared key or lock.
type Permission struct {
	Key    *Key  // one of Key and Lock is set
	Lock   *Lock //
	Access Access
	// Grants are the role's grants that give the access, in schema order.
	Grants []*Grant
}

// Path is the full path of the key or lock.
func (p *Permission) Path() Path {
	if p.Key != nil {
		return p.Key.FullPath()
	}
	return p.Lock.FullPath()
}

// What names the key or lock: "key Thermostat.SetPoint".
func (p *Permission) What() string {
	if p.Key != nil {
		return "key " + p.Key.QualifiedName()
	}
	return "lock " + p.Lock.QualifiedName()
}

// Permissions returns the role's access to each key and lock it may use:
// keys in AllKeys order, then locks in AllLocks order. Reading a group
// reads its keys and locks, writing it writes its keys, locking it takes
// its locks; taking a lock reads and writes the lock's key.
func (r *Role) Permissions() []*Permission {
	keys := map[*Key]*Permission{}
	locks := map[*Lock]*Permission{}
	addKey := func(k *Key, a Access, g *Grant) {
		p := keys[k]
		if p == nil {
			p = &Permission{Key: k}
			keys[k] = p
		}
		p.Access |= a
		p.Grants = append(p.Grants, g)
	}
	addLock := func(l *Lock, a Access, g *Grant) {
		p := locks[l]
		if p == nil {
			p = &Permission{Lock: l}
			locks[l] = p
		}
		p.Access |= a
		p.Grants = append(p.Grants, g)
	}
	for _, g := range r.Grants {
		switch {
		case g.Group != nil:
			if g.Verb != VerbLock {
				for _, k := range g.Group.Keys {
					addKey(k, verbAccess(g.Verb), g)
				}
			}
			if g.Verb != VerbWrite {
				for _, l := range g.Group.Locks {
					addLock(l, verbAccess(g.Verb), g)
				}
			}
		case g.Key != nil:
			addKey(g.Key, verbAccess(g.Verb), g)
		case g.Lock != nil:
			addLock(g.Lock, verbAccess(g.Verb), g)
		}
	}
	var out []*Permission
	for _, k := range r.schemaKeys(keys) {
		out = append(out, keys[k])
	}
	for _, l := range r.schemaLocks(locks) {
		out = append(out, locks[l])
	}
	return out
}

func verbAccess(v Verb) Access {
	switch v {
	case VerbRead:
		return AccessRead
	case VerbWrite:
		return AccessWrite
	}
	return AccessReadWrite
}

// schemaKeys orders the keys of m as the schema declares them. The schema
// is reached through the grants, which all belong to it.
func (r *Role) schemaKeys(m map[*Key]*Permission) []*Key {
	var out []*Key
	for _, k := range r.schema().AllKeys() {
		if m[k] != nil {
			out = append(out, k)
		}
	}
	return out
}

func (r *Role) schemaLocks(m map[*Lock]*Permission) []*Lock {
	var out []*Lock
	for _, l := range r.schema().AllLocks() {
		if m[l] != nil {
			out = append(out, l)
		}
	}
	return out
}

// Role returns the role with the given name, or nil.
func (s *Schema) Role(name string) *Role {
	for _, r := range s.Roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

var roleFields = []string{"doc", "client_ids", "usernames", "attributes", "read", "write", "lock"}

// roles decodes the roles mapping. Grants name groups, keys and locks, so
// it runs after they are all decoded.
func (l *loader) roles(n *yaml.Node) []*Role {
	var out []*Role
	for _, p := range l.mapping(n, "roles") {
		r := &Role{Name: p.name, Pos: l.pos(p.key), s: l.s}
		what := "role " + p.name
		if !isRoleName(p.name) {
			l.errorf(p.key, "%s: name must start with an ASCII letter and hold only letters, digits, '_' or '-'", what)
		}
		lists := map[Verb]*yaml.Node{}
		for _, q := range l.mapping(p.val, what, roleFields...) {
			switch q.name {
			case "doc":
				r.Doc, _ = l.str(q.val, what+": doc")
			case "client_ids":
				r.ClientIDs = l.principals(q.val, what+": client_ids")
			case "usernames":
				r.Usernames = l.principals(q.val, what+": usernames")
			case "attributes":
				r.Attributes = l.attributes(q.val, what)
			case "read":
				lists[VerbRead] = q.val
			case "write":
				lists[VerbWrite] = q.val
			case "lock":
				lists[VerbLock] = q.val
			}
		}
		if p.val.Kind != yaml.MappingNode {
			continue
		}
		if len(r.ClientIDs)+len(r.Usernames)+len(r.Attributes) == 0 && !hasKey(p.val, "client_ids") && !hasKey(p.val, "usernames") && !hasKey(p.val, "attributes") {
			l.errorf(p.key, "%s: names nobody; want client_ids, usernames or attributes", what)
		}
		for _, v := range []Verb{VerbRead, VerbWrite, VerbLock} {
			if lists[v] != nil {
				r.Grants = append(r.Grants, l.grants(r, v, lists[v])...)
			}
		}
		if len(lists) == 0 {
			l.errorf(p.key, "%s: grants nothing; want read, write or lock", what)
		}
		out = append(out, r)
	}
	return out
}

func isRoleName(s string) bool {
	if s == "" || !isASCIILetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// principals decodes a non-empty list of client ids or user names.
func (l *loader) principals(n *yaml.Node, what string) []string {
	items := l.list(n, what)
	if items == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		v, ok := l.str(it, what)
		switch {
		case !ok:
			continue
		case v == "":
			l.errorf(it, "%s: an entry must not be empty", what)
		case strings.IndexFunc(v, isControl) >= 0:
			l.errorf(it, "%s: %q holds a control character", what, v)
		case seen[v]:
			l.errorf(it, "%s: %q is listed twice", what, v)
		default:
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// list returns the items of a non-empty YAML sequence, reporting anything
// else.
func (l *loader) list(n *yaml.Node, what string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "%s: want a list, got %s", what, describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.errorf(n, "%s: want at least one entry", what)
		return nil
	}
	return n.Content
}

// attributes decodes a list of attribute sets: mappings of attribute
// names to values, which a client must all carry.
func (l *loader) attributes(n *yaml.Node, what string) []Attributes {
	what += ": attributes"
	var out []Attributes
	for _, it := range l.list(n, what) {
		var set Attributes
		for _, p := range l.mapping(it, what) {
			switch {
			case p.name == "" || strings.IndexFunc(p.name, isControl) >= 0:
				l.errorf(p.key, "%s: attribute name %q: want a non-empty name without control characters", what, p.name)
			case p.val.Kind != yaml.ScalarNode || isNull(p.val):
				l.errorf(p.val, "%s: attribute %s: want a value, got %s", what, p.name, describe(p.val))
			case strings.IndexFunc(p.val.Value, isControl) >= 0:
				l.errorf(p.val, "%s: attribute %s: %q holds a control character", what, p.name, p.val.Value)
			default:
				set = append(set, Attribute{Name: p.name, Value: p.val.Value})
			}
		}
		if it.Kind == yaml.MappingNode && len(it.Content) == 0 {
			l.errorf(it, "%s: an empty set would match every client; name at least one attribute", what)
		}
		if len(set) > 0 {
			out = append(out, set)
		}
	}
	return out
}

// grants decodes one of a role's read, write and lock lists, resolving
// each name to a group, key or lock.
func (l *loader) grants(r *Role, v Verb, n *yaml.Node) []*Grant {
	what := "role " + r.Name + ": " + v.String()
	var out []*Grant
	seen := map[string]*Grant{}
	for _, it := range l.list(n, what) {
		name, ok := l.str(it, what)
		if !ok {
			continue
		}
		g := &Grant{Verb: v, Name: name, Pos: l.pos(it)}
		if first, dup := seen[name]; dup {
			l.errorf(it, "%s: %s is listed twice (first at %s)", what, name, note(first.Pos))
			continue
		}
		seen[name] = g
		if !l.resolveGrant(g, it, what) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// resolveGrant points g at the group, key or lock it names and checks that
// the verb fits it.
func (l *loader) resolveGrant(g *Grant, n *yaml.Node, what string) bool {
	s := l.s
	if l.targets == nil {
		l.targets = newGrantTargets(s)
	}
	t := l.targets
	group, member, qualified := strings.Cut(g.Name, ".")
	switch {
	case !qualified:
		if g.Group = t.groups[g.Name]; g.Group == nil {
			g.Key, g.Lock = t.keys[nil][g.Name], t.locks[nil][g.Name]
		}
	case t.groups[group] != nil:
		grp := t.groups[group]
		g.Key, g.Lock = t.keys[grp][member], t.locks[grp][member]
	}
	switch {
	case g.Group == nil && g.Key == nil && g.Lock == nil:
		l.errorf(n, "%s: %s names no group, key or lock%s", what, g.Name, suggest.DidYouMean(g.Name, grantNames(s)))
		return false
	case g.Verb == VerbLock && g.Key != nil:
		l.errorf(n, "%s: %s is a key; grant keys under read or write", what, g.Name)
		return false
	case g.Verb == VerbWrite && g.Lock != nil:
		l.errorf(n, "%s: %s is a lock; grant it under lock (taking a lock writes its key)", what, g.Name)
		return false
	case g.Verb == VerbLock && g.Group != nil && len(g.Group.Locks) == 0:
		l.errorf(n, "%s: group %s has no locks", what, g.Name)
		return false
	case g.Verb == VerbWrite && g.Group != nil && len(g.Group.Keys) == 0:
		l.errorf(n, "%s: group %s has no keys", what, g.Name)
		return false
	}
	return true
}

// grantTargets finds what a grant names without a pass over every group,
// key and lock per grant: the groups by name, and the keys and locks of
// each group (nil: the top level) by name. A name declared twice (an
// error reported elsewhere) finds the first, as a pass would.
type grantTargets struct {
	groups map[string]*Group
	keys   map[*Group]map[string]*Key
	locks  map[*Group]map[string]*Lock
}

func newGrantTargets(s *Schema) *grantTargets {
	t := &grantTargets{groups: map[string]*Group{}, keys: map[*Group]map[string]*Key{}, locks: map[*Group]map[string]*Lock{}}
	addKeys := func(g *Group, ks []*Key) {
		m := map[string]*Key{}
		for _, k := range ks {
			if m[k.Name] == nil {
				m[k.Name] = k
			}
		}
		t.keys[g] = m
	}
	addLocks := func(g *Group, ls []*Lock) {
		m := map[string]*Lock{}
		for _, lk := range ls {
			if m[lk.Name] == nil {
				m[lk.Name] = lk
			}
		}
		t.locks[g] = m
	}
	addKeys(nil, s.Keys)
	addLocks(nil, s.Locks)
	for _, g := range s.Groups {
		if t.groups[g.Name] == nil {
			t.groups[g.Name] = g
			addKeys(g, g.Keys)
			addLocks(g, g.Locks)
		}
	}
	return t
}

// grantNames is every name a grant may use, for suggestions.
func grantNames(s *Schema) []string {
	var out []string
	for _, g := range s.Groups {
		out = append(out, g.Name)
	}
	for _, k := range s.AllKeys() {
		out = append(out, k.QualifiedName())
	}
	for _, lk := range s.AllLocks() {
		out = append(out, lk.QualifiedName())
	}
	return out
}
