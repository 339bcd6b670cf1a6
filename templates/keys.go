package templates

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitKey declares the accessor of one key: a method returning the
// runtime's generic handle, bound to the key's name, codec, TTL and guard.
func emitKey(f *jen.File, r recv, k *schema.Key) {
	full := k.FullPath().String()
	comment(f, keyDoc(k, full)...)

	var ttl, guard jen.Code
	if k.TTL > 0 {
		ttl = durationExpr(k.TTL)
	}
	if k.Guard != nil {
		if k.Guard.Group != nil {
			guard = jen.Id(r.name).Dot(k.Guard.Name).Call()
		} else {
			guard = jen.Add(r.store).Dot(k.Guard.Name).Call()
		}
	}
	// The key's earlier names, in schema.Key.FullMovedFroms's order.
	var moved []jen.Code
	owns := k.MovedFrom
	if len(owns) == 0 {
		owns = []schema.Path{k.Path}
	}
	switch {
	case k.Group != nil && k.Group.Moved():
		for i := range k.Group.MovedFrom {
			for _, own := range owns {
				moved = append(moved, pathExpr(r, jen.Id(r.name).Dot(earlierField(i)), own))
			}
		}
	case k.Moved():
		for _, own := range owns {
			moved = append(moved, pathExpr(r, r.prefix, own))
		}
	}
	elem := goType(k.Type)
	handle := newKey(goType(k.Type), r.client, pathExpr(r, r.prefix, k.Path), codecValue(k), ttl, guard, k.Persist, moved, transitionsOption(k))
	f.Func().Params(jen.Id(r.name).Op("*").Id(r.typ)).Id(k.Name).Params(paramList(r, k.Params)...).
		Add(returns(jen.Op("*").Qual(runtimePkg, "Key").Types(elem), canFail(k.Params))).
		Block(body(r, k.QualifiedName(), k.Params, handle)...)
}

// keyDoc documents a key accessor: the key path, value type, encoding,
// TTL, guard and parameter checks.
func keyDoc(k *schema.Key, full string) []string {
	paras := []string{
		fmt.Sprintf("%s returns the handle of the key %q, holding values of type %s, %s.", k.Name, full, k.Type, encodingDoc(k)),
		sentence(k.Doc),
	}
	var notes []string
	if k.TTL > 0 {
		notes = append(notes, fmt.Sprintf("Every Set expires the value after %s unless the call passes runtime.WithTTL or runtime.WithoutTTL.", k.TTL))
	}
	if k.Guard != nil {
		notes = append(notes, fmt.Sprintf("Writes carry the fencing token of lock %s (%q) while this client holds its lease; CompareAndSet and Update take the lease, read, compare and write under it.", k.Guard.QualifiedName(), k.Guard.FullPath().String()))
	}
	if k.Persist {
		notes = append(notes, "Every write asks the broker to keep the key on disk (aio-persistence), so that it survives a restart of the broker.")
	}
	if k.Moved() {
		var from []string
		for _, p := range k.FullMovedFroms() {
			from = append(from, strconv.Quote(p.String()))
		}
		if len(from) == 1 {
			notes = append(notes, fmt.Sprintf("The key moved from %s (renamed_from): while it is absent, reads fall back to that key, and every write deletes it (see runtime.MovedFrom).", from[0]))
		} else {
			notes = append(notes, fmt.Sprintf("The key moved from %s (renamed_from): while it is absent, reads fall back to those keys in this order, and every write deletes them (see runtime.MovedFrom).", strings.Join(from, ", ")))
		}
	}
	if canFail(k.Params) {
		notes = append(notes, paramNote(k.Params))
	}
	return append(paras, notes...)
}
