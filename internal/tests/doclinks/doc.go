// Package doclinks holds the test that every link in the repository's
// Markdown files, and every docs/*.md reference in its Go comments,
// resolves inside the repository: to a file that exists and, with a
// #fragment, to a heading of that file (GitHub's anchor rules).
package doclinks
