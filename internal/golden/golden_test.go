package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n- b\n+ c\n"},
		{"a\n", "a\nb\n", "line 2:\n- \n+ b\n"},
	} {
		if got := Diff(c.want, c.got); got != c.diff {
			t.Errorf("Diff(%q, %q) = %q, want %q", c.want, c.got, got, c.diff)
		}
	}
}

func TestCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Compare(t, path, "same\n")
	if got := Path("vxlan"); got != filepath.Join("testdata", "vxlan.golden") {
		t.Errorf("Path = %s", got)
	}
}
