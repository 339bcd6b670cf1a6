package templates

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitLock declares the accessor of one lock: a method returning the
// runtime's lock handle, bound to the lock's key and lease duration.
func emitLock(f *jen.File, r recv, l *schema.Lock) {
	full := l.FullPath().String()
	doc := fmt.Sprintf("%s returns the handle of the lock stored at %q. A lease lasts %s and is renewed by the runtime until released; its version is the fencing token of the keys the lock guards.", l.Name, full, l.TTL)
	var note string
	if canFail(l.Params) {
		note = paramNote(l.Params)
	}
	comment(f, doc, sentence(l.Doc), note)
	handle := newLock(r.client, pathExpr(r, r.prefix, l.Path), durationExpr(l.TTL))
	f.Func().Params(jen.Id(r.name).Op("*").Id(r.typ)).Id(l.Name).Params(paramList(r, l.Params)...).
		Add(returns(jen.Op("*").Qual(runtimePkg, "Lock"), canFail(l.Params))).
		Block(body(r, l.QualifiedName(), l.Params, handle)...)
}
