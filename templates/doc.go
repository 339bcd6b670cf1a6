// Package templates turns a loaded schema into Go source: the typed
// accessors that applications call. Each emitted construct has its own
// file here (header, value structs, enums, the store root, groups, keys,
// locks, parameters); Generate stitches them into one gofmt'd file per
// schema.
//
// Generated code is a thin layer over package runtime: it declares value
// types and builds key names, and every operation is a method of the
// generic runtime.Key[T] or runtime.Lock it returns. The output depends
// only on the schema and Options, never on the clock, the environment or
// map iteration order, so generating twice gives identical bytes.
package templates
