package main

import (
	"strconv"
	"strings"
)

// plural is "1 key", "2 keys": n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Every error a verb reports is one line with one prefix, "ssgen VERB: "
// (runCLI adds it). The libraries ssgen is built on start their messages
// with their own prefix ("statestore: " for the runtime, "server: " for
// the server), which says where a message comes from to a Go program but
// is noise after the verb's: libErr drops it, keeping the error itself
// for errors.Is and errors.As.

// libPrefixes are the prefixes of the packages whose errors the verbs
// report.
var libPrefixes = []string{"statestore: ", "server: ", "bench: ", "etcdstore: ", "migrate: "}

// libText is err's message without its libraries' leading prefixes (a
// bench error may start "bench: statestore: ").
func libText(err error) string {
	s := err.Error()
	for again := true; again; {
		again = false
		for _, p := range libPrefixes {
			if rest, ok := strings.CutPrefix(s, p); ok {
				s, again = rest, true
			}
		}
	}
	return s
}

// libErr is err with libText as its message.
func libErr(err error) error {
	if err == nil {
		return nil
	}
	return &cliError{msg: libText(err), err: err}
}

// cliError is a message for the user that keeps the error it was made
// from.
type cliError struct {
	msg string
	err error
}

func (e *cliError) Error() string { return e.msg }
func (e *cliError) Unwrap() error { return e.err }
