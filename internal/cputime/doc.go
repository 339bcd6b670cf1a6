// Package cputime reads the CPU time the process has used, for the
// benchmarks that report CPU per operation (bench, runtime, server).
package cputime
