// Package golden compares test output with files under testdata/ and owns
// the one -update flag that rewrites them. Every golden helper (labtest's
// recorded commands, svctest's rules) goes through it, so a test binary
// that imports several of them still defines -update once.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Updating reports whether the test runs with -update.
func Updating() bool { return *update }

// Path is testdata/NAME.golden.
func Path(name string) string { return filepath.Join("testdata", name+".golden") }

// Check compares got with testdata/NAME.golden (go test -update rewrites it).
func Check(t testing.TB, name, got string) {
	t.Helper()
	Compare(t, Path(name), got)
}

// Compare compares got with the file at path, or rewrites the file with
// -update.
func Compare(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it after review):\n%s", path, Diff(string(want), got))
	}
}

// Diff lists the lines that differ between want and got.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, a, c)
		}
	}
	return b.String()
}
