package etcdtest

import (
	"testing"
)

func TestThreeMembersKillAndRestart(t *testing.T) {
	c := Start(t, 3)
	if len(c.Endpoints()) != 3 {
		t.Fatalf("endpoints %v", c.Endpoints())
	}
	c.Kill(1)
	if c.Member(1).Running() {
		t.Fatal("member 1 runs after Kill")
	}
	c.WaitHealthy(0) // two of three keep a quorum
	c.Restart(1)
	if !c.Member(1).Running() {
		t.Fatal("member 1 does not run after Restart")
	}
}
