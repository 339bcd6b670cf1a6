package hlc

import (
	"errors"
	"fmt"
	"testing"
)

func TestParseAcceptsPaddedAndUnpadded(t *testing.T) {
	cases := []struct {
		in   string
		want HLC
	}{
		{"1696374425000:1:StateStore", HLC{1696374425000, 1, "StateStore"}},
		{"001795310997834:00002:01a200df-5e1c-4a1e-9d2c-1c1c1c1c1c1c", HLC{1795310997834, 2, "01a200df-5e1c-4a1e-9d2c-1c1c1c1c1c1c"}},
		{"0:0:", HLC{0, 0, ""}},
		{"18446744073709551615:18446744073709551615:n", HLC{^uint64(0), ^uint64(0), "n"}},
		{"1:2:node with spaces", HLC{1, 2, "node with spaces"}},
	}
	for _, tc := range cases {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	for _, in := range []string{
		"", "1", "1:2", "1:2:3:4", ":1:n", "1::n", "-1:0:n", "1:-1:n", "+1:0:n", "0x1:0:n",
		"1.5:0:n", " 1:0:n", "1 :0:n", "18446744073709551616:0:n", "1:18446744073709551616:n", "a:b:c",
	} {
		_, err := Parse(in)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrMalformed", in, err)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Input != in {
			t.Errorf("Parse(%q): want a *ParseError naming the input, got %v", in, err)
		}
	}
}

func TestStringPadsLikeOfficialClients(t *testing.T) {
	cases := map[HLC]string{
		{1696374425000, 1, "StateStore"}: "001696374425000:00001:StateStore",
		{0, 0, ""}:                       "000000000000000:00000:",
		{1795310997834, 123456, "c"}:     "001795310997834:123456:c",
		{^uint64(0), 0, "n"}:             "18446744073709551615:00000:n",
		{1, 99999, "01a200df-5e1c-4a1e"}: "000000000000001:99999:01a200df-5e1c-4a1e",
	}
	for h, want := range cases {
		if got := h.String(); got != want {
			t.Errorf("String(%+v) = %q, want %q", h, got, want)
		}
		back, err := Parse(want)
		if err != nil || back != h {
			t.Errorf("Parse(String()) = %+v, %v; want %+v", back, err, h)
		}
	}
}

func TestCompareOrdersWallThenCounterThenNode(t *testing.T) {
	ordered := []HLC{
		{},
		{0, 0, "a"},
		{0, 1, ""},
		{1, 0, ""},
		{1, 0, "A"},
		{1, 0, "a"},
		{1, 0, "ab"},
		{1, 2, "a"},
		{1, 10, "a"},
		{2, 0, "a"},
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestIsZero(t *testing.T) {
	if !(HLC{}).IsZero() || (HLC{Node: "n"}).IsZero() || (HLC{Counter: 1}).IsZero() {
		t.Fatal("IsZero")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1696374425000:1:StateStore", "001795310997834:00002:x", "0:0:", "1:2", "::", "-1:0:n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Parse(%q): untyped error %v", s, err)
			}
			return
		}
		back, err := Parse(h.String())
		if err != nil || back != h {
			t.Fatalf("Parse(%q) = %+v; String %q parses to %+v, %v", s, h, h.String(), back, err)
		}
	})
}

func ExampleParse() {
	h, err := Parse("1696374425000:1:StateStore")
	fmt.Println(h.Wall, h.Counter, h.Node, err)
	fmt.Println(h)
	// Output:
	// 1696374425000 1 StateStore <nil>
	// 001696374425000:00001:StateStore
}
