//go:build unix && !linux

package main

// liveMember assumes a member that signal 0 reaches is live: without /proc
// zombies cannot be told apart, and stopGroup's waits are bounded anyway.
func liveMember(int) bool { return true }
