package runtime

import (
	"testing"
)

func TestTopics(t *testing.T) {
	const svc = "FA9AE35F-2F64-47CD-9BFF-08E2B32A0FE8"
	cases := []struct{ id, resp string }{
		{"client-id1", "clients/client-id1/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"a/b", "clients/612F62/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"w+", "clients/772B/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"\xff", "clients/FF/services/statestore/v1/" + svc + "/command/invoke/response"},
		{"A4C138F0E1D2", "clients/A4C138F0E1D2/services/statestore/v1/" + svc + "/command/invoke/response"}, // hex of no valid id
		{"4142", "clients/34313432/services/statestore/v1/" + svc + "/command/invoke/response"},             // the hex of "AB"
	}
	for _, tc := range cases {
		if got := ResponseTopic(tc.id); got != tc.resp {
			t.Errorf("ResponseTopic(%q) = %q, want %q", tc.id, got, tc.resp)
		}
	}
	if got, want := NotifyTopic("client-id1", []byte("SOMEKEY")), "clients/statestore/v1/"+svc+"/636C69656E742D696431/command/notify/534F4D454B4559"; got != want {
		t.Errorf("NotifyTopic = %q, want %q", got, want)
	}
	if k, ok := decodeHex("534f4d454B4559"); !ok || string(k) != "SOMEKEY" {
		t.Errorf("decodeHex mixed case = %q, %v", k, ok)
	}
	if nodeID("a:b") == "a:b" || nodeID("ab") != "ab" {
		t.Error("nodeID must hex-encode ids holding ':' only")
	}
}
