package templates

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// emitGroupGetters declares, for each key of a group with parameters, a
// Store method that reads the key of many instances at once, thin over
// runtime.GetEach: the group's Params name the instances, the group's
// accessor builds each handle (its refusals become that position's error).
func emitGroupGetters(f *jen.File, g *schema.Group) {
	pt := paramsType(g)
	for _, k := range g.Keys {
		if !k.HasGetter() {
			continue
		}
		elem := goType(k.Type)
		keyType := jen.Op("*").Qual(runtimePkg, "Key").Types(elem)
		args := make([]jen.Code, len(g.Params))
		for i, p := range g.Params {
			args[i] = jen.Id("p").Dot(paramField(p))
		}
		var body []jen.Code
		if canFail(g.Params) {
			body = []jen.Code{
				jen.List(jen.Id("h"), jen.Err()).Op(":=").Id(storeRecvName).Dot(g.Name).Call(args...),
				jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
				jen.Return(jen.Id("h").Dot(k.Name).Call(), jen.Nil()),
			}
		} else {
			body = []jen.Code{jen.Return(jen.Id(storeRecvName).Dot(g.Name).Call(args...).Dot(k.Name).Call(), jen.Nil())}
		}
		var refused string
		if canFail(g.Params) {
			refused = fmt.Sprintf(" Parameters the %s accessor refuses fail their own position with its *runtime.ParamError, and nothing is sent for them.", g.Name)
		}
		comment(f,
			fmt.Sprintf("%s reads the %s key of the %s of each element of params, up to opts.Concurrency at a time: result i is params[i]'s, its Entry the decoded value and version, or its Err why not (runtime.ErrNotFound when the key does not exist).%s The error is a *runtime.GetManyError when some position failed. Duplicates, retries and timeouts follow runtime.Client.GetMany.", k.GetterName(), k.Name, g.Name, refused))
		f.Func().Params(jen.Id(storeRecvName).Op("*").Id("Store")).Id(k.GetterName()).
			Params(
				jen.Id("ctx").Qual("context", "Context"),
				jen.Id("params").Index().Id(pt),
				jen.Id("opts").Qual(runtimePkg, "GetManyOptions"),
			).
			Params(jen.Index().Qual(runtimePkg, "KeyResult").Types(elem), jen.Error()).
			Block(jen.Return(jen.Qual(runtimePkg, "GetEach").Call(
				jen.Id("ctx"), jen.Id("params"), jen.Id("opts"),
				jen.Func().Params(jen.Id("p").Id(pt)).Params(keyType, jen.Error()).Block(body...),
			)))
	}
}
