package templates

import (
	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// recv describes the type an accessor is a method of: the Store for
// top-level keys and locks, a group handle for the rest.
type recv struct {
	name   string          // receiver variable
	typ    string          // receiver type, used as a pointer
	client jen.Code        // the *runtime.Client
	store  jen.Code        // the *Store, for top-level locks used as guards
	prefix jen.Code        // rendered path prefix; nil at the top level
	shadow map[string]bool // extra names a parameter must not take (see argName)
}

func storeRecv(shadow map[string]bool) recv {
	return recv{
		shadow: shadow,
		name:   storeRecvName,
		typ:    "Store",
		client: jen.Id(storeRecvName).Dot("c"),
		store:  jen.Id(storeRecvName),
	}
}

func groupRecv(g *schema.Group, shadow map[string]bool) recv {
	return recv{
		shadow: shadow,
		name:   groupRecvName,
		typ:    g.Name,
		client: jen.Id(groupRecvName).Dot("s").Dot("c"),
		store:  jen.Id(groupRecvName).Dot("s"),
		prefix: jen.Id(groupRecvName).Dot("prefix"),
	}
}

// emitStore declares the root of the generated API.
func emitStore(f *jen.File, s *schema.Schema) {
	comment(f, "Store is the typed view of the state store keys declared in the schema. It holds no state besides the client and is safe for concurrent use; handles it returns are cheap to build, so build them where they are used.")
	f.Type().Id("Store").Struct(jen.Id("c").Op("*").Qual(runtimePkg, "Client"))

	comment(f, "New returns the Store reading and writing through c.")
	f.Func().Id("New").Params(jen.Id("c").Op("*").Qual(runtimePkg, "Client")).Op("*").Id("Store").Block(
		jen.Return(jen.Op("&").Id("Store").Values(jen.Dict{jen.Id("c"): jen.Id("c")})),
	)

	comment(f, "Client returns the client the store was built with.")
	f.Func().Params(jen.Id(storeRecvName).Op("*").Id("Store")).Id("Client").Params().Op("*").Qual(runtimePkg, "Client").Block(
		jen.Return(jen.Id(storeRecvName).Dot("c")),
	)
}
