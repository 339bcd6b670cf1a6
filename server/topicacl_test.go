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
