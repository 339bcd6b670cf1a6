package runtime_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/internal/glob"
	"github.com/ssgen/ssgen/runtime"
)

func siteTemplate() *runtime.Template {
	return runtime.NewTemplate("sites/{site}/areas/{area}",
		runtime.TemplateMember{Name: "Name", Path: "name"},
		runtime.TemplateMember{Name: "Sensor", Path: "sensors/{name}/{n}"},
		runtime.TemplateMember{Name: "Writer", Path: "writer/{s}"},
	)
}

func TestTemplateGlobEscapesLiteralsAndStarsParameters(t *testing.T) {
	for _, c := range []struct {
		t    *runtime.Template
		want string
	}{
		{runtime.NewTemplate("thermostats/{id}", runtime.TemplateMember{Name: "A", Path: "a"}), "thermostats/*/a"},
		{runtime.NewTemplate("thermostats/{id}", runtime.TemplateMember{Name: "A", Path: "a"}, runtime.TemplateMember{Name: "B", Path: "b"}), "thermostats/*/*"},
		{runtime.NewTemplate("we*ird?/[x]/{p}/a\\b", runtime.TemplateMember{Name: "K", Path: "k/{q}"}), `we\*ird\?/\[x\]/*/a\\b/k/*`},
		{siteTemplate(), "sites/*/areas/*/*"},
	} {
		if got := c.t.Glob(); got != c.want {
			t.Errorf("%s: Glob %q, want %q", c.t.Path(), got, c.want)
		}
	}
}

func TestTemplateMatchReadsParametersAndMember(t *testing.T) {
	tp := siteTemplate()
	for _, c := range []struct {
		key    string
		params []string
		member string
	}{
		{"sites/north/areas/7/name", []string{"north", "7"}, "Name"},
		{"sites/north/areas/-3/sensors/t/2", []string{"north", "-3"}, "Sensor"},
		{"sites/a*b/areas/x/writer/me", []string{"a*b", "x"}, "Writer"}, // shape only: types are the parser's
		{"sites/north/areas/7", nil, ""},                                // the group itself is no key
		{"sites/north/areas/7/", nil, ""},
		{"sites//areas/7/name", nil, ""},
		{"sites/north/zones/7/name", nil, ""},
		{"sites/north/areas/7/other", nil, ""},
		{"sites/north/areas/7/name/more", nil, ""},
		{"sites/north/areas/7/sensors/t", nil, ""},
		{"sites/north/areas/7/sensors//2", nil, ""},
		{"sites/a/b/areas/7/name", nil, ""}, // a parameter never spans '/'
		{"", nil, ""},
	} {
		params, member, ok := tp.Match(c.key)
		if ok != (c.params != nil) || !slices.Equal(params, c.params) || member != c.member {
			t.Errorf("Match(%q) = %q, %q, %v; want %q, %q", c.key, params, member, ok, c.params, c.member)
		}
	}
}

// FuzzTemplateMatch: every key Match accepts matches the glob the listing
// asks for, its parameters are non-empty segments, and putting them back
// into the path gives the key's prefix.
func FuzzTemplateMatch(f *testing.F) {
	for _, k := range []string{"sites/n/areas/7/name", "sites/n/areas/7/sensors/a/1", "sites/*/areas/[/writer/\\", "x", "sites/n/areas/7/writer/a/b"} {
		f.Add(k)
	}
	tp := siteTemplate()
	g := glob.Compile(tp.Glob())
	f.Fuzz(func(t *testing.T, key string) {
		params, member, ok := tp.Match(key)
		if !ok {
			return
		}
		if !g.Match(key) {
			t.Fatalf("Match accepts %q, its glob %q does not", key, tp.Glob())
		}
		for _, p := range params {
			if p == "" || strings.Contains(p, "/") {
				t.Fatalf("%q: parameter %q", key, p)
			}
		}
		prefix := "sites/" + params[0] + "/areas/" + params[1] + "/"
		if !strings.HasPrefix(key, prefix) || member == "" {
			t.Fatalf("%q: params %q member %q", key, params, member)
		}
	})
}
