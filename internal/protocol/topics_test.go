package protocol

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestOwnsLevel(t *testing.T) {
	for _, tc := range []struct {
		client, level string
		want          bool
	}{
		{"victim-app", "victim-app", true},
		{"victim-app", "76696374696D2D617070", true},
		{"victim-app", "76696374696d2d617070", false}, // the service and the SDKs write upper case only
		{"76696374696D2D617070", "76696374696D2D617070", false},
		{"76696374696D2D617070", "3736363936333734363936443244363137303730", true},
		{"76696374696d2d617070", "76696374696d2d617070", true}, // lower case is no one's hex
		{"1234", "1234", false},
		{"123", "123", true}, // odd length: nobody's hex
		{"statestore", "statestore", false},
		{"statestore", "73746174657374 6F7265", false},
		{"statestore", "73746174657374" + "6F7265", true},
		{"a/b", "a", false},
		{"a/b", "612F62", true},
		{"+", "+", false},
		{"#", "#", false},
		{"", "", false},
		{"c1", "c2", false},
	} {
		if got := OwnsLevel(tc.client, tc.level); got != tc.want {
			t.Errorf("OwnsLevel(%q, %q) = %v, want %v", tc.client, tc.level, got, tc.want)
		}
	}
}

func TestMayPublish(t *testing.T) {
	for _, tc := range []struct {
		client, topic string
		want          bool
	}{
		{"c1", "clients/c1/services/statestore/v1/x/command/invoke/response", true},
		{"c1", "clients/6331/statestore/v1/x/command/invoke/response", true},
		{"c1", "clients/c2/x", false},
		{"c1", "clients/6332/x", false},
		{"c1", NotifyTopic("c1", []byte("k")), false}, // only the service writes notifications
		{"statestore", "clients/statestore/x", false},
		{"c1", "clients/", false},
		{"c1", "clients", true},
		{"c1", "app/telemetry", true},
		{"c1", RequestTopic, true},
	} {
		if got := MayPublish(tc.client, tc.topic); got != tc.want {
			t.Errorf("MayPublish(%q, %q) = %v, want %v", tc.client, tc.topic, got, tc.want)
		}
	}
}

func TestOwnLevelIsOwned(t *testing.T) {
	for _, id := range []string{"c1", "victim-app", "76696374696D2D617070", "statestore", "a/b", "+", "é"} {
		if l := OwnLevel(id); !OwnsLevel(id, l) {
			t.Errorf("OwnLevel(%q) = %q, not owned", id, l)
		}
	}
}

// levelsOf lists every level an id could be confused with: its plain form,
// its hex in both cases, and the text its hex decodes to.
func levelsOf(id string) []string {
	l := []string{id, strings.ToUpper(hex.EncodeToString([]byte(id))), hex.EncodeToString([]byte(id)), ServiceLevel}
	if b, err := hex.DecodeString(id); err == nil {
		l = append(l, string(b))
	}
	return l
}

func checkExclusive(t *testing.T, a, b string) {
	t.Helper()
	if a == b {
		return
	}
	for _, l := range append(levelsOf(a), levelsOf(b)...) {
		if OwnsLevel(a, l) && OwnsLevel(b, l) {
			t.Fatalf("level %q owned by both %q and %q", l, a, b)
		}
		if OwnsNotifyLevel(a, l) && OwnsNotifyLevel(b, l) {
			t.Fatalf("notify level %q owned by both %q and %q", l, a, b)
		}
		if l == ServiceLevel && (OwnsLevel(a, l) || OwnsLevel(b, l)) {
			t.Fatalf("the service's level is owned by a client (%q or %q)", a, b)
		}
	}
}

// TestNoLevelIsOwnedByTwoClients is the property behind client isolation:
// for random pairs of ids, biased towards the dangerous ones (one the hex
// of the other, hex-looking ids, "statestore"), no level is owned by both.
func TestNoLevelIsOwnedByTwoClients(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789ABCDEFabcdef-/+#s"
	randomID := func() string {
		b := make([]byte, r.IntN(9))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		a := randomID()
		var b string
		switch r.IntN(4) {
		case 0:
			b = strings.ToUpper(hex.EncodeToString([]byte(a)))
		case 1:
			b = hex.EncodeToString([]byte(a))
		case 2:
			b = ServiceLevel
		default:
			b = randomID()
		}
		checkExclusive(t, a, b)
	}
}

func FuzzNoLevelIsOwnedByTwoClients(f *testing.F) {
	f.Add("victim-app", "76696374696D2D617070")
	f.Add("attacker", "statestore")
	f.Add("1234", "\x12\x34")
	f.Add("a/b", "612F62")
	f.Fuzz(checkExclusive)
}
