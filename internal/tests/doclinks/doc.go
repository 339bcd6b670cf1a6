// Package doclinks holds the tests that every link in the repository's
// Markdown files, and every docs/*.md reference in its Go comments,
// resolves inside the repository: to a file that exists and, with a
// #fragment, to a heading of that file (GitHub's anchor rules); and that
// the files the documents and Go comments name exist: a backticked
// repository path in README.md or docs/*.md, a path in a Go comment, and
// a Go file named on its own (like doc.go) in either.
package doclinks
