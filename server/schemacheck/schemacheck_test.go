package schemacheck

import (
	"testing"

	"github.com/ssgen/ssgen/schema"
)

// The check reads a value as the generated code would: any
// declared version of a versioned type fits, a misfit names the
// declaration and the field path, and undeclared keys and locks pass.
func TestWriteCheckReadsEveryDeclaredVersion(t *testing.T) {
	sc, err := schema.LoadFile("../../internal/tests/e2e/versions/v2/ssgen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	check := New(sc)
	for _, c := range []struct {
		key, value string
		decl, path string // "" when it fits
	}{
		{"versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"heat"}`, "", ""},
		{"versions/setpoint-json", `{"$v":1,"fahrenheit":68,"mode":"cool"}`, "", ""},
		{"versions/setpoint-json", `{"fahrenheit":68,"mode":"cool"}`, "", ""}, // unstamped: the oldest version
		{"versions/setpoint-json", `{"$v":2,"celsius":20,"mode":"warm"}`, "SetPointJSON", ".mode"},
		{"versions/setpoint-json", `{"$v":3,"kelvin":1}`, "SetPointJSON", ""},
		{"versions/setpoint-json", `not json`, "SetPointJSON", ""},
		{"versions/rooms/kitchen/target", `{"$v":2,"celsius":20,"mode":"heat"}`, "Room.Target", ""}, // JSON where MessagePack is declared
		{"versions/rooms/kitchen/owner", `anything`, "", ""},                                        // a lock
		{"undeclared/key", `anything`, "", ""},
		{"versions/\xff", `anything`, "", ""},
		{"versions/rooms/\xff/target", `garbage`, "Room.Target", ""}, // resolved as its bytes: a generated accessor writes any string parameter as it is
		{"versions/rooms/\xff\xfe/target", `{"$v":2,"celsius":20,"mode":"heat"}`, "Room.Target", ""},
		{"versions/rooms/\xff/target", "\x82\xa2$v\x02\xa7celsius\x14", "", ""},
	} {
		p := check([]byte(c.key), []byte(c.value))
		switch {
		case c.decl == "" && p != nil:
			t.Errorf("%s %s: %+v, want it to fit", c.key, c.value, p)
		case c.decl != "" && p == nil:
			t.Errorf("%s %s: fits, want a misfit", c.key, c.value)
		case p != nil && (p.Declaration != c.decl || p.Path != c.path || p.Reason != "decode" || p.Msg == ""):
			t.Errorf("%s %s: %+v, want declaration %s path %q", c.key, c.value, p, c.decl, c.path)
		}
	}
}
