package protocol

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
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
		{"4142", "4142", false},                                // the hex of the id "AB"
		{"1234", "1234", true},                                 // decodes to control characters: no id's hex
		{"A4C138F0E1D2", "A4C138F0E1D2", true},                 // a MAC address: decodes to invalid UTF-8
		{"00124B001CAF8E21", "00124B001CAF8E21", true},         // a serial: decodes to bytes with NUL
		{"C3A9", "C3A9", false},                                // the hex of "é"
		{"C2", "C2", true},                                     // a truncated UTF-8 sequence
		{"C280", "C280", true},                                 // U+0080, a C1 control character
		{"123", "123", true},                                   // odd length: nobody's hex
		{"a\x01", "a\x01", false},                              // an id the broker refuses owns nothing
		{"a\x01", "6101", false},
		{"\xff", "FF", false},
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
		{"c1", "clients/c2/statestore/v1/x/command/invoke/response", false},
		{"c1", "clients/c2/statestore/v1/x/command/invoke", false},
		{"c1", "clients/c2/services/statestore/v1/x/command/invoke/response", false},
		{"c1", "clients/6332/statestore/v1/x/command/invoke/response", false},
		{"c1", "clients//statestore/x", false}, // nobody's level
		{"c1", "clients/c2/statestore", false},
		{"c1", NotifyTopic("c1", []byte("k")), false}, // only the service writes notifications
		{"statestore", "clients/statestore/x", false},
		{"c1", "clients/statestore", false},
		// Ordinary MQTT: the command invoker's response topic, where the
		// executor (another client) answers.
		{"c1", "clients/c2/x", true},
		{"c1", "clients/6332/x", true},
		{"c1", "clients/c2/rpc/samples/increment", true},
		{"c1", "clients/c2/services/other", true},
		{"c1", "clients/c2/statestorex/y", true},
		{"c1", "clients/", true},
		{"c1", "clients", true},
		{"c1", "app/telemetry", true},
		{"c1", RequestTopic, true},
	} {
		if got := MayPublish(tc.client, tc.topic); got != tc.want {
			t.Errorf("MayPublish(%q, %q) = %v, want %v", tc.client, tc.topic, got, tc.want)
		}
	}
}

func TestMayBeAnsweredOn(t *testing.T) {
	for _, tc := range []struct {
		client, topic string
		want          bool
	}{
		{"c1", "clients/c1/services/statestore/v1/x/command/invoke/response", true},
		{"c1", "clients/6331/statestore/v1/x/command/invoke/response", true},
		{"c1", "clients/c1/anything", true},
		{"c1", "replies/c1", true},
		{"c1", "clients/c2/anything", false}, // anywhere in another client's level
		{"c1", "clients/6332/rpc/x", false},
		{"c1", "clients/statestore/x", false},
		{"c1", "clients//x", false},
		{"A4C138F0E1D2", "clients/A4C138F0E1D2/statestore/v1/x/command/invoke", true},
		{"a\x01", "clients/6101/x", false},
	} {
		if got := MayBeAnsweredOn(tc.client, tc.topic); got != tc.want {
			t.Errorf("MayBeAnsweredOn(%q, %q) = %v, want %v", tc.client, tc.topic, got, tc.want)
		}
	}
}

func TestValidClientID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"c1", true},
		{"A4C138F0E1D2", true},
		{"é", true},
		{"a/b", true},
		{"\uFFFD", true}, // the replacement character itself is a character
		{"", false},
		{"a\x00b", false},
		{"a\x01b", false},
		{"tab\t", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"\xa4\xc1", false},
		{"\xed\xa0\x80", false}, // a surrogate
	} {
		if got := ValidClientID(tc.id); got != tc.want {
			t.Errorf("ValidClientID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestHexOfValidIDAgreesWithDecoding checks the allocation-free decoding
// against the obvious one.
func TestHexOfValidIDAgreesWithDecoding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		b := make([]byte, r.IntN(7))
		for i := range b {
			switch r.IntN(3) {
			case 0:
				b[i] = byte(r.IntN(256))
			case 1:
				b[i] = 0x80 + byte(r.IntN(0x40)) // continuation bytes
			default:
				b[i] = "aé€😀\x01\xc2\x85"[r.IntN(13)]
			}
		}
		level := strings.ToUpper(hex.EncodeToString(b))
		if got, want := isHexOfValidID(level), ValidClientID(string(b)); got != want {
			t.Fatalf("isHexOfValidID(%q) = %v, ValidClientID of its decoding %v", level, got, want)
		}
	}
}

func TestOwnLevelIsOwned(t *testing.T) {
	for _, id := range []string{"c1", "victim-app", "76696374696D2D617070", "statestore", "a/b", "+", "é",
		"A4C138F0E1D2", "00124B001CAF8E21", "4142", "1234"} {
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

// protectedTopics are topics the state store writes for the owner of
// level, in every layout, and filters that spell them out.
func protectedTopics(level string) []string {
	return []string{
		"clients/" + level + "/statestore/v1/" + ServiceID + "/command/invoke/response",
		"clients/" + level + "/statestore/v1/" + ServiceID + "/command/invoke",
		"clients/" + level + "/services/statestore/v1/" + ServiceID + "/command/invoke/response",
		NotifyPrefix + "/" + level + "/command/notify/6B",
		"clients/" + level + "/#",
		"+/" + level + "/statestore/#",
	}
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
		if strings.ContainsAny(l, "/+#") || !utf8.ValidString(l) {
			continue // not a topic level
		}
		for _, topic := range protectedTopics(l) {
			if MaySubscribe(a, topic) && MaySubscribe(b, topic) {
				t.Fatalf("%q readable by both %q and %q", topic, a, b)
			}
			if !strings.ContainsAny(topic, "+#") && MayPublish(a, topic) && MayPublish(b, topic) {
				t.Fatalf("%q writable by both %q and %q", topic, a, b)
			}
		}
	}
}

// TestNoLevelIsOwnedByTwoClients is the property behind client isolation:
// for random pairs of ids, biased towards the dangerous ones (one the hex
// of the other, hex-looking ids, "statestore", ids with bytes the broker
// refuses), no level is owned by both, and no topic the state store writes
// is readable or writable by both.
func TestNoLevelIsOwnedByTwoClients(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789ABCDEFabcdef-/+#s\x00\x01\x7f\xa4\xc2\x85\xc3\xa9"
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
		switch r.IntN(5) {
		case 0:
			b = strings.ToUpper(hex.EncodeToString([]byte(a)))
		case 1:
			b = hex.EncodeToString([]byte(a))
		case 2:
			b = ServiceLevel
		case 3:
			if d, err := hex.DecodeString(a); err == nil {
				b = string(d)
				break
			}
			fallthrough
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
	f.Add("AB", "4142")
	f.Add("A4C138F0E1D2", "\xa4\xc1\x38\xf0\xe1\xd2")
	f.Add("00124B001CAF8E21", "\x00\x12\x4b\x00\x1c\xaf\x8e\x21")
	f.Add("a/b", "612F62")
	f.Fuzz(checkExclusive)
}

func TestTopicChecksAllocateNothing(t *testing.T) {
	const mac = "A4C138F0E1D2"
	resp := "clients/" + mac + "/services/statestore/v1/" + ServiceID + "/command/invoke/response"
	notify := NotifyTopic(mac, []byte("k"))
	if n := testing.AllocsPerRun(100, func() {
		MaySubscribe(mac, resp)
		MaySubscribe("C3A9", resp)
		MaySubscribe(mac, notify)
		MayPublish("4142", resp)
		MayBeAnsweredOn(mac, resp)
	}); n != 0 {
		t.Fatalf("%v allocations per check", n)
	}
}
