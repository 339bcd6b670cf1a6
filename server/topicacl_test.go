package server

import "testing"

func TestSubscribeAllowedOnlyUnderTheClientsOwnLevels(t *testing.T) {
	const id = "c1" // hex 6331
	own := NotifyPrefix + "/6331/command/notify/+"
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{own, true},
		{NotifyPrefix + "/c1/command/notify/+", true},
		{NotifyPrefix + "/6331/#", true},
		{NotifyPrefix + "/6332/command/notify/+", false},
		{NotifyPrefix + "/+/command/notify/+", false},
		{NotifyPrefix + "/#", false},
		{"clients/statestore/#", false},
		{"clients/statestore/v1/+/6331/command/notify/+", false},
		{"clients/c1/statestore/v1/x/command/invoke/response", true},
		{"clients/6331/statestore/v1/x/command/invoke/response", true},
		{"clients/c2/statestore/v1/x/command/invoke/response", false},
		{"clients/+/statestore/#", false},
		{"clients/#", false},
		{"clients/+", true},
		{"clients", true},
		{"#", false},
		{"+/c2/x", false},
		{"+/c1/x", true},
		{"app/telemetry/#", true},
		{"$share/g/clients/c2/x", false},
		{"$share/g/app/x", true},
		{"$SYS/#", true},
	} {
		if got := subscribeAllowed(id, tc.filter); got != tc.want {
			t.Errorf("subscribeAllowed(%q, %q) = %v, want %v", id, tc.filter, got, tc.want)
		}
	}
}

func TestSubscribeAllowedSpellsOutTheNotificationPrefix(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"clients/statestore", true},
		{"clients/statestore/v1", true},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8", true},
		{"clients/statestore/v2/x", false},
		{"clients/statestore/+/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/6331/#", false},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/+", false},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/6331", true},
		{"clients/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/63", false},
	} {
		if got := subscribeAllowed("c1", tc.filter); got != tc.want {
			t.Errorf("subscribeAllowed(c1, %q) = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestSubscribeCheckAllocatesNothing(t *testing.T) {
	topic := "clients/c1/statestore/v1/FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8/command/invoke/response"
	notify := NotifyTopic("c1", []byte("key"))
	if n := testing.AllocsPerRun(100, func() {
		subscribeAllowed("c1", topic)
		subscribeAllowed("c1", notify)
	}); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}
