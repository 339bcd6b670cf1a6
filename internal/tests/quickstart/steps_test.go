package quickstart

import (
	"reflect"
	"testing"
)

func TestParseSteps(t *testing.T) {
	readme := "# x\n\n<!-- quickstart: run -->\n```sh\ngo mod init m   # start\n\n```\n\ntext\n\n<!-- quickstart: file a/b.go -->\n\n```go\npackage b\n```\n<!-- quickstart: output -->\n```text\nhi\n```\n```sh\nnot marked\n```\n"
	got, err := parseSteps([]byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	want := []step{
		{kind: kindRun, body: "go mod init m   # start\n\n"},
		{kind: kindFile, arg: "a/b.go", body: "package b\n"},
		{kind: kindOutput, body: "hi\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if c := commands(got[0].body); !reflect.DeepEqual(c, []string{"go mod init m"}) {
		t.Fatalf("commands = %q", c)
	}
	for _, bad := range []string{
		"<!-- quickstart: bogus -->\n```\n```\n",
		"<!-- quickstart: run -->\ntext\n```\n```\n",
		"<!-- quickstart: run -->\n",
		"<!-- quickstart: run -->\n<!-- quickstart: run -->\n```\n```\n",
	} {
		if _, err := parseSteps([]byte(bad)); err == nil {
			t.Errorf("parseSteps accepted %q", bad)
		}
	}
}
