package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssgen/ssgen/schema"
)

func TestInitWritesAStarterThatLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Cold-Room")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "ssgen.yaml")
	runSchemaVerb(t, "init", f).wantCode(t, exitOK)
	s, err := schema.LoadFile(f)
	if err != nil {
		t.Fatalf("starter does not load: %v", err)
	}
	if s.Package != "coldroom" {
		t.Fatalf("package %q, want coldroom (from the directory)", s.Package)
	}
	src, _ := os.ReadFile(f)
	if !strings.HasPrefix(string(src), "# yaml-language-server: $schema="+schema.JSONSchemaURL+"\n") {
		t.Fatal("starter lacks the yaml-language-server line")
	}
}

func TestInitRefusesToOverwrite(t *testing.T) {
	f := writeFile(t, t.TempDir(), "ssgen.yaml", "mine\n")
	r := runSchemaVerb(t, "init", "--package", "x", f)
	r.wantCode(t, exitNegative)
	if !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("stderr %q", r.stderr)
	}
	if got, _ := os.ReadFile(f); string(got) != "mine\n" {
		t.Fatal("file was changed")
	}
}

func TestInitTakesThePackageFlag(t *testing.T) {
	f := filepath.Join(t.TempDir(), "store.yaml")
	runSchemaVerb(t, "init", f, "--package", "plant").wantCode(t, exitOK)
	s, err := schema.LoadFile(f)
	if err != nil || s.Package != "plant" {
		t.Fatalf("package %v, err %v", s, err)
	}
	runSchemaVerb(t, "init", "--package", "Bad-Name", filepath.Join(t.TempDir(), "x.yaml")).wantCode(t, exitUsage)
}

// TestInitAlignsThePackageComment: the package line's comment stays in the
// column of the encoding line's, whatever the package name's length.
func TestInitAlignsThePackageComment(t *testing.T) {
	for _, pkg := range []string{"x", "thermostat", "averyveryverylongpackagename"} {
		var pkgCol, encCol int
		for _, l := range strings.Split(string(starterSchema(pkg)), "\n") {
			switch {
			case strings.HasPrefix(l, "package: "):
				pkgCol = strings.Index(l, "#")
				if !strings.HasPrefix(l, "package: "+pkg+" ") {
					t.Errorf("%s: %q", pkg, l)
				}
			case strings.HasPrefix(l, "encoding: "):
				encCol = strings.Index(l, "#")
			}
		}
		if len(pkg) < 18 && pkgCol != encCol {
			t.Errorf("%s: package comment at column %d, encoding's at %d", pkg, pkgCol, encCol)
		}
		if len(pkg) >= 18 && pkgCol != len("package: ")+len(pkg)+1 {
			t.Errorf("%s: package comment at column %d, want one space after the name", pkg, pkgCol)
		}
	}
}
