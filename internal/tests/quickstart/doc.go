// Package quickstart holds the test that follows README.md's quick start
// in a new module, outside the repository: the README's commands, files
// and expected output are read from the README itself (the
// "<!-- quickstart: ... -->" markers before its code blocks), so that the
// README cannot drift from what works.
//
// Markers: "file PATH" writes the next code block to PATH; "run" runs each
// line of the next block (a '#' starts a comment); "serve" stands for
// starting a state store, which the test does in-process; "output" is what
// the last "go run" must print.
package quickstart
