package templates

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ssgen/ssgen/schema"
)

// Receiver names of the generated methods.
const (
	storeRecvName = "s"
	groupRecvName = "g"
)

// shadowed are names a parameter must not take in generated code: the
// receivers, locals and packages the accessor bodies use, and the
// predeclared identifiers they call.
var shadowed = map[string]bool{
	storeRecvName: true, groupRecvName: true, "err": true, "name": true,
	"strconv": true, "regexp": true, "runtime": true, "codec": true, "time": true,
	"msgpack": true, "string": true, "int64": true, "uint64": true, "nil": true,
	"true": true, "false": true, "error": true, "byte": true,
	// Code from an evolving schema names its codec.Evolution.
	schema.EvolutionVarName: true,
}

// argName is the Go name of a parameter's argument: its schema name, with
// "Param" added when that would shadow something the body uses: a name of
// shadowed, one of extra (the file's own declared types and imported
// package names), or any exported name, which could be a type.
func argName(p *schema.Param, extra map[string]bool) string {
	if shadowed[p.Name] || extra[p.Name] || (p.Name[0] >= 'A' && p.Name[0] <= 'Z') {
		return p.Name + "Param"
	}
	return p.Name
}

// paramList declares the arguments of an accessor.
func paramList(r recv, ps []*schema.Param) []jen.Code {
	out := make([]jen.Code, len(ps))
	for i, p := range ps {
		out[i] = jen.Id(argName(p, r.shadow)).Add(goType(p.Type))
	}
	return out
}

// renderParam is the path segment text of a parameter's value.
func renderParam(r recv, p *schema.Param) *jen.Statement {
	v := jen.Id(argName(p, r.shadow))
	switch k := p.Type.Kind; {
	case k == schema.KindString:
		return v
	case k == schema.KindEnum:
		return jen.String().Call(v)
	case k == schema.KindInt:
		return jen.Qual("strconv", "Itoa").Call(v)
	case k == schema.KindInt64:
		return jen.Qual("strconv", "FormatInt").Call(v, jen.Lit(10))
	case k.IsSigned():
		return jen.Qual("strconv", "FormatInt").Call(jen.Int64().Call(v), jen.Lit(10))
	case k == schema.KindUint64:
		return jen.Qual("strconv", "FormatUint").Call(v, jen.Lit(10))
	default:
		return jen.Qual("strconv", "FormatUint").Call(jen.Uint64().Call(v), jen.Lit(10))
	}
}

// checkParamCall is the check of one parameter's value, or nil when every
// value of its type renders to a valid segment (integers).
func checkParamCall(r recv, owner string, p *schema.Param) *jen.Statement {
	switch p.Type.Kind {
	case schema.KindString:
		re := jen.Nil()
		if p.Regexp != nil {
			re = jen.Id(patternVar(owner, p))
		}
		return jen.Qual(runtimePkg, "CheckParam").Call(jen.Lit(p.Name), jen.Id(argName(p, r.shadow)), re)
	case schema.KindEnum:
		v := jen.Id(argName(p, r.shadow))
		return jen.Qual(runtimePkg, "CheckEnumParam").Call(jen.Lit(p.Name), jen.String().Call(v), v.Clone().Dot("Valid").Call())
	}
	return nil
}

// checkStmts are the statements that return early, with zero and the
// error, when one of ps is refused; none when every value is accepted.
func checkStmts(r recv, owner string, ps []*schema.Param, zero jen.Code) []jen.Code {
	var out []jen.Code
	for _, p := range ps {
		c := checkParamCall(r, owner, p)
		if c == nil {
			continue
		}
		out = append(out, jen.If(jen.Err().Op(":=").Add(c), jen.Err().Op("!=").Nil()).Block(
			jen.Return(zero, jen.Err()),
		))
	}
	return out
}

// returns is the result list of an accessor: the handle, and an error
// when a parameter can be refused.
func returns(handle jen.Code, fallible bool) jen.Code {
	if fallible {
		return jen.Params(handle, jen.Error())
	}
	return handle
}

// body is an accessor's body: the checks, then the handle.
func body(r recv, owner string, ps []*schema.Param, handle jen.Code) []jen.Code {
	stmts := checkStmts(r, owner, ps, jen.Nil())
	if len(stmts) == 0 {
		return []jen.Code{jen.Return(handle)}
	}
	return append(stmts, jen.Return(handle, jen.Nil()))
}

// pathExpr is the string expression of a path: prefix (nil for none)
// followed by the path's segments, literals merged into one constant.
func pathExpr(r recv, prefix jen.Code, p schema.Path) *jen.Statement {
	var parts []jen.Code
	var lit strings.Builder
	if prefix != nil {
		parts = append(parts, prefix)
		lit.WriteString("/")
	}
	for i, seg := range p.Segments {
		if i > 0 {
			lit.WriteString("/")
		}
		if seg.Param == nil {
			lit.WriteString(seg.Literal)
			continue
		}
		if lit.Len() > 0 {
			parts = append(parts, jen.Lit(lit.String()))
			lit.Reset()
		}
		parts = append(parts, renderParam(r, seg.Param))
	}
	if lit.Len() > 0 {
		parts = append(parts, jen.Lit(lit.String()))
	}
	s := jen.Add(parts[0])
	for _, part := range parts[1:] {
		s.Op("+").Add(part)
	}
	return s
}

// patternVar names the package variable holding a parameter's compiled
// pattern (schema.Param.PatternVarName).
func patternVar(owner string, p *schema.Param) string { return p.PatternVarName(owner) }

// canFail reports whether some value of ps is refused by the checks.
func canFail(ps []*schema.Param) bool {
	for _, p := range ps {
		if p.Type.Kind == schema.KindString || p.Type.Kind == schema.KindEnum {
			return true
		}
	}
	return false
}

// fileNames are the names a file's declarations and imports take besides
// the fixed ones: declared types (a key's type is named in its accessor)
// and the package names of go_type imports (their codecs are).
func fileNames(s *schema.Schema) map[string]bool {
	out := map[string]bool{}
	for _, t := range s.Types {
		out[t.Name] = true
		if t.GoType != nil {
			p := t.GoType.ImportPath
			base := p[strings.LastIndexByte(p, '/')+1:]
			out[base] = true
			// jennifer names a package by its path's last element with
			// everything but letters and digits removed.
			out[strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, base)] = true
		}
	}
	return out
}
