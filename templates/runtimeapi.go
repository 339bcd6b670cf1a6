package templates

import (
	"time"

	"github.com/dave/jennifer/jen"
)

// The runtime API the generated code calls, in one place: when it
// changes, this file and the SupportPackageIsVersion guard change together.

// newKey builds a *runtime.Key[T] for the key stored under name.
func newKey(elem, client, name, codecValue, ttl, guard jen.Code, persist bool, movedFrom []jen.Code, transitions jen.Code) *jen.Statement {
	args := []jen.Code{client, jen.Index().Byte().Call(name), codecValue}
	if ttl != nil {
		args = append(args, jen.Qual(runtimePkg, "DefaultTTL").Call(ttl))
	}
	if guard != nil {
		args = append(args, jen.Qual(runtimePkg, "GuardedBy").Call(guard))
	}
	if persist {
		args = append(args, jen.Qual(runtimePkg, "PersistWrites").Call())
	}
	if len(movedFrom) > 0 {
		names := make([]jen.Code, len(movedFrom))
		for i, m := range movedFrom {
			names[i] = jen.Index().Byte().Call(m)
		}
		args = append(args, jen.Qual(runtimePkg, "MovedFrom").Call(names...))
	}
	if transitions != nil {
		args = append(args, transitions)
	}
	return jen.Qual(runtimePkg, "NewKey").Types(elem).Call(args...)
}

// migrateFor builds the migrate.Decl of a key's values (Migrations).
func migrateFor(elem, name, pattern, codecValue jen.Code) *jen.Statement {
	return jen.Qual(migratePkg, "For").Types(elem).Call(name, pattern, codecValue)
}

// migrateGuardedBy gives a key's migrate.Decl the guard lock of each of
// its concrete keys, from the key's and the lock's path templates.
func migrateGuardedBy(decl *jen.Statement, keyPath, lockPath string) *jen.Statement {
	return decl.Dot("GuardedBy").Call(jen.Lit(keyPath), jen.Lit(lockPath))
}

// newLock builds a *runtime.Lock whose leases last ttl.
func newLock(client, name, ttl jen.Code) *jen.Statement {
	return jen.Qual(runtimePkg, "NewLock").Call(client, jen.Index().Byte().Call(name), ttl)
}

// durationExpr spells d as a constant expression in the largest unit
// that divides it: 10 * time.Second, 1500 * time.Millisecond.
func durationExpr(d time.Duration) *jen.Statement {
	units := []struct {
		d    time.Duration
		name string
	}{
		{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"},
	}
	for _, u := range units {
		if d%u.d == 0 {
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Lit(int(d)).Op("*").Qual("time", "Nanosecond")
}
