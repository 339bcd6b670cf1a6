package server

import "os"

// SSGEN_TEST_WAL runs every test of the package that opens a data
// directory with the write-ahead log (Options.WriteAheadLog).
func init() { forceWAL = os.Getenv("SSGEN_TEST_WAL") != "" }
