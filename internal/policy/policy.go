// Package policy turns a schema's roles and persist marks into the
// configuration that enforces them: the Azure IoT Operations broker's
// BrokerAuthorization rules (state store resources, plus the MQTT topics a
// state store client needs), the equivalent authorization file of
// `ssgen serve --authz-file`, and the state store part of the broker's
// persistence settings.
//
// A key path becomes a keyType String entry when it has no parameters and
// a keyType Pattern glob otherwise, each parameter a '*' (schema.Path.Glob);
// schema.Load has already refused grants whose pattern would reach the
// keys of a declaration the role was not granted.
package policy

import (
	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/schema"
)

// Rule is one role's authorization rule.
type Rule struct {
	Role       string
	Doc        string
	ClientIDs  []string
	Usernames  []string
	Attributes []schema.Attributes
	Resources  []Resource
	// NotifyIDs are the role's client ids without wildcards, whose
	// notification topics can be named exactly (see BrokerResources).
	NotifyIDs []string
}

// Resource is one stateStoreResources entry: keys of one key type, all
// with the same access.
type Resource struct {
	KeyType string   // "String" (exact keys) or "Pattern" (globs)
	Keys    []string // in schema order
	Method  string   // "Read", "Write" or "ReadWrite"
}

// Rules returns a rule per role of s, in declaration order. Within a rule
// resources come by method (Read, Write, ReadWrite), then key type
// (String, Pattern), keys in schema order.
func Rules(s *schema.Schema) []Rule {
	var out []Rule
	for _, r := range s.Roles {
		rule := Rule{Role: r.Name, Doc: r.Doc, ClientIDs: r.ClientIDs, Usernames: r.Usernames, Attributes: r.Attributes}
		for _, id := range r.ClientIDs {
			if !hasWildcard(id) {
				rule.NotifyIDs = append(rule.NotifyIDs, id)
			}
		}
		rule.Resources = resources(r.Permissions())
		out = append(out, rule)
	}
	return out
}

func resources(perms []*schema.Permission) []Resource {
	var out []Resource
	for _, a := range []schema.Access{schema.AccessRead, schema.AccessWrite, schema.AccessReadWrite} {
		var paths []schema.Path
		for _, p := range perms {
			if p.Access == a {
				paths = append(paths, p.Path())
			}
		}
		out = append(out, byKeyType(a.String(), paths)...)
	}
	return out
}

// byKeyType returns the resources of method that name paths: one String
// resource of the exact keys, then one Pattern resource of the others,
// each without repeats and in the order given, leaving out an empty one.
func byKeyType(method string, paths []schema.Path) []Resource {
	var out []Resource
	for _, wantExact := range []bool{true, false} {
		res := Resource{KeyType: "Pattern", Method: method}
		if wantExact {
			res.KeyType = "String"
		}
		seen := map[string]bool{}
		for _, p := range paths {
			glob, exact := p.Glob()
			if exact != wantExact || seen[glob] {
				continue
			}
			seen[glob] = true
			res.Keys = append(res.Keys, glob)
		}
		if len(res.Keys) > 0 {
			out = append(out, res)
		}
	}
	return out
}

// hasWildcard reports whether a principal is a glob rather than one name.
func hasWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// Topics a state store client of the ssgen runtime publishes and
// subscribes to.
const (
	// RequestTopic is where every request goes.
	RequestTopic = protocol.RequestTopic
	// ResponseTopic is the runtime's response topic with the broker's
	// client id token in place of the client's own level.
	ResponseTopic = protocol.ClientsRoot + "{principal.clientId}" + protocol.ResponseSuffix
)

// NotifyTopic is the notification topic filter of one client id, as the
// runtime subscribes to it.
func NotifyTopic(clientID string) string {
	return protocol.NotifyClientPrefix(clientID) + "+"
}

// PersistResources returns the stateStoreResources entries (without a
// method) of the keys of s marked persist: true, exact keys first, each in
// schema order.
func PersistResources(s *schema.Schema) []Resource {
	var paths []schema.Path
	for _, k := range s.AllKeys() {
		if k.Persist {
			paths = append(paths, k.FullPath())
		}
	}
	return byKeyType("", paths)
}

// AlsoPersisted lists, for each key marked persist: true, the keys and
// locks not so marked whose keys its pattern also matches: the broker
// persists them too. Each entry reads "Group.Key also covers lock X".
func AlsoPersisted(s *schema.Schema) []string {
	type decl struct {
		what string
		path schema.Path
	}
	var others []decl
	for _, k := range s.AllKeys() {
		if !k.Persist {
			others = append(others, decl{"key " + k.QualifiedName(), k.FullPath()})
		}
	}
	for _, l := range s.AllLocks() {
		others = append(others, decl{"lock " + l.QualifiedName(), l.FullPath()})
	}
	paths := make([]schema.Path, len(others))
	for i, o := range others {
		paths[i] = o.path
	}
	set := schema.NewPathSet(paths)
	var out []string
	for _, k := range s.AllKeys() {
		if !k.Persist {
			continue
		}
		for _, i := range set.ReachedBy(k.FullPath()) {
			o := others[i]
			glob, _ := k.FullPath().Glob()
			out = append(out, "the pattern "+glob+" of key "+k.QualifiedName()+" also covers "+o.what+" ("+o.path.String()+")")
		}
	}
	return out
}
