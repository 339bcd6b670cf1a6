package main

import (
	"testing"
)

func TestDelExitCodes(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "d", "v").want(t, exitOK, nil)
	run(t, url, "del", "d").want(t, exitOK, ptr(""))
	run(t, url, "del", "d").want(t, exitNegative, ptr(""))
	run(t, url, "get", "d").want(t, exitNegative, ptr(""))
}

func TestVDelExitCodes(t *testing.T) {
	url := testStore(t)
	run(t, url, "set", "vd", "mine").want(t, exitOK, nil)
	run(t, url, "vdel", "vd", "theirs").want(t, exitNegative, ptr(""))
	run(t, url, "get", "vd").want(t, exitOK, ptr("mine\n"))
	run(t, url, "vdel", "vd", "6d696e65", "--hex").want(t, exitOK, ptr(""))
	run(t, url, "vdel", "vd", "mine").want(t, exitNegative, ptr(""))
}
