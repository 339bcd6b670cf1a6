package migrate_test

import (
	"context"
	"testing"

	"github.com/ssgen/ssgen/runtime"
	"github.com/ssgen/ssgen/runtime/codec"
	"github.com/ssgen/ssgen/runtime/migrate"
	"github.com/ssgen/ssgen/server/servertest"
)

type setPoint struct {
	Celsius float64 `json:"celsius" msgpack:"celsius"`
	Enabled bool    `json:"enabled" msgpack:"enabled"`
}

// TestApplyEvolvedCodec migrates through a real evolved codec (a renamed
// field and a default), as a generated key's Codec() is.
func TestApplyEvolvedCodec(t *testing.T) {
	ev := &codec.Evolution{Structs: map[string]codec.StructEvolution{"SetPoint": {Fields: []codec.FieldEvolution{
		{Name: "celsius", RenamedFrom: []string{"temp"}},
		{Name: "enabled", Default: "true"},
	}}}}
	c := codec.Evolved[setPoint]{Codec: codec.JSON[setPoint]{}, Evolution: ev, Type: "SetPoint"}
	d := []migrate.Decl{migrate.For[setPoint]("SetPoint", "sp/*", c)}
	srv := servertest.New(t)
	cl := dial(t, srv.URL())
	ctx := context.Background()
	for k, v := range map[string]string{"sp/old": `{"temp":21.5}`, "sp/new": `{"celsius":19,"enabled":false}`} {
		if _, err := cl.Set(ctx, []byte(k), []byte(v), runtime.SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := migrate.Validate(ctx, cl, d)
	if err != nil || counts[0].Outdated != 1 || counts[0].Current != 1 {
		t.Fatalf("before: %+v, %v", counts, err)
	}
	res, err := migrate.Apply(ctx, cl, d, migrate.Options{Backup: &discard{}})
	if err != nil || res.Rewritten != 1 {
		t.Fatalf("Apply: %+v, %v", res, err)
	}
	got, _, err := cl.Get(ctx, []byte("sp/old"))
	if err != nil || string(got) != `{"celsius":21.5,"enabled":true}` {
		t.Fatalf("sp/old = %s, %v", got, err)
	}
	// A codec with no evolution migrates nothing that it reads as written.
	plain := []migrate.Decl{migrate.For[setPoint]("SetPoint", "sp/*", codec.JSON[setPoint]{})}
	if counts, err := migrate.Validate(ctx, cl, plain); err != nil || counts[0].Current != 2 {
		t.Fatalf("plain codec: %+v, %v", counts, err)
	}
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
