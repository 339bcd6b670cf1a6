package engine

import "testing"

func TestVdel(t *testing.T) {
	runTable(t, []tableCase{
		{name: "matching value deletes with :1", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("VDEL k v"), want: one, wantTS: true},
			{args: args("GET k"), want: null},
		}},
		{name: "absent key answers :0", steps: []step{
			{args: args("VDEL k v"), want: zero, wantTS: true},
		}},
		{name: "different value answers :-1 and keeps the key", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("VDEL k zz"), want: minusOne, wantTS: true},
			{args: args("GET k"), want: bulk("v"), wantTS: true},
		}},
		{name: "prefix of the value is different", steps: []step{
			{args: args("SET k value"), want: ok, wantTS: true},
			{args: args("VDEL k val"), want: minusOne, wantTS: true},
		}},
		{name: "empty value matches empty value", steps: []step{
			{args: []string{"SET", "k", ""}, want: ok, wantTS: true},
			{args: []string{"VDEL", "k", ""}, want: one, wantTS: true},
		}},
		{name: "VDEL needs no __ts", steps: []step{
			{args: args("SET k v"), want: ok, wantTS: true},
			{args: args("VDEL k v"), noTS: true, want: one, wantTS: true},
		}},
		{name: "VDEL refuses a malformed __ft", steps: []step{
			{args: args("VDEL k v"), ft: "::", want: errp(ErrMalformedTimestamp)},
		}},
	})
}
