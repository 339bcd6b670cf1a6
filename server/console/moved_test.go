package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
	"github.com/ssgen/ssgen/server/console"
)

// TestWritesOfAMovedKeyMoveIt: issue #27. The console's writes of a
// declared key that moved (renamed_from) delete its earlier key, as
// generated code's do, so a stale earlier value never reads as the key's
// again; an edit of the earlier key writes the key it moved to.
func TestWritesOfAMovedKeyMoveIt(t *testing.T) {
	s, err := schema.Load("x.yaml", []byte(`
version: 1
package: p
keys:
  Temp: {path: tempk2, renamed_from: tempk, type: int64, encoding: string}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, console.Options{Schema: s}, nil)
	tok := e.csrf()
	post := func(path, body string) string {
		t.Helper()
		st, resp, _ := e.do("POST", path, body, "Content-Type: application/json", "X-Ssgen-Csrf: "+tok)
		if st != http.StatusOK || !strings.Contains(resp, `"ok":true`) {
			t.Fatalf("%s %s: %d %s", path, body, st, resp)
		}
		return resp
	}
	value := func(key string) string {
		ent, ok := e.srv.Engine().Lookup([]byte(key))
		if !ok {
			return "(absent)"
		}
		return string(ent.Value)
	}

	e.put("tempk", "5")
	var page map[string]any
	e.getJSON("/api/keys?flat=1", &page)
	items, _ := page["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["declared"] != "Temp (earlier key, renamed_from)" {
		t.Errorf("the key list does not mark the earlier key: %v", items)
	}
	if resp := post("/api/set", `{"key":"tempk2","value":"7","encoding":"schema"}`); !strings.Contains(resp, `"earlier":["tempk"]`) {
		t.Errorf("set: %s", resp)
	}
	if value("tempk2") != "7" || value("tempk") != "(absent)" {
		t.Fatalf("after set: tempk2 %s, tempk %s", value("tempk2"), value("tempk"))
	}
	e.put("tempk", "5")
	post("/api/delete", `{"key":"tempk2"}`)
	if value("tempk2") != "(absent)" || value("tempk") != "(absent)" {
		t.Fatalf("after delete: tempk2 %s, tempk %s", value("tempk2"), value("tempk"))
	}
	e.put("tempk", "5")
	post("/api/set", `{"key":"tempk","value":"9","encoding":"schema"}`)
	if value("tempk2") != "9" || value("tempk") != "(absent)" {
		t.Fatalf("after an edit of the earlier key: tempk2 %s, tempk %s", value("tempk2"), value("tempk"))
	}
}
