package diff

import "testing"

func TestUnifiedDiffMatchesDiffU(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{
			name: "one changed line in the middle keeps three lines of context",
			a:    "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			b:    "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			want: "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		},
		{
			name: "a new file",
			a:    "",
			b:    "x\ny\n",
			want: "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		},
		{
			name: "a deleted file",
			a:    "x\n",
			b:    "",
			want: "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n",
		},
		{
			name: "distant changes make two hunks",
			a:    "a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n",
			b:    "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
			want: "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n",
		},
		{
			name: "an inserted line",
			a:    "1\n2\n",
			b:    "1\nnew\n2\n",
			want: "--- a\n+++ b\n@@ -1,2 +1,3 @@\n 1\n+new\n 2\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String("a", "b", []byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
