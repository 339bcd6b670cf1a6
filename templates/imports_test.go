package templates

import "testing"

func TestGroupImportsSeparatesTheStandardLibrary(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{
			in:   "package p\n\nimport (\n\t\"context\"\n\tu \"example.com/units\"\n\t\"github.com/ssgen/ssgen/runtime\"\n\t\"time\"\n)\n\nvar _ = context.TODO\nvar _ = runtime.SupportPackageIsVersion3\nvar _ u.C\nvar _ time.Time\n",
			want: "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\tu \"example.com/units\"\n\t\"github.com/ssgen/ssgen/runtime\"\n)\n\nvar _ = context.TODO\nvar _ = runtime.SupportPackageIsVersion3\nvar _ u.C\nvar _ time.Time\n",
		},
		{ // one group: as it was
			in:   "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n\nvar _ = context.TODO\nvar _ time.Time\n",
			want: "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n\nvar _ = context.TODO\nvar _ time.Time\n",
		},
		{ // no imports
			in:   "package p\n\nvar x = 1\n",
			want: "package p\n\nvar x = 1\n",
		},
	} {
		got, err := groupImports([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("groupImports:\n%s\nwant:\n%s", got, tc.want)
		}
	}
}
