package tmpdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Make's folders are fresh and private, named after their process.
func TestMake(t *testing.T) {
	a, err := Make("nginx")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(a)
	b, err := Make("nginx")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(b)
	if a == b {
		t.Errorf("two folders of one name %s", a)
	}
	st, err := os.Stat(a)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("mode %v (%v), want 0700", st.Mode(), err)
	}
	if want := Prefix + strconv.Itoa(os.Getpid()) + "."; !strings.HasPrefix(filepath.Base(a), want) {
		t.Errorf("%s does not start with %s", a, want)
	}
}

// Leftovers are the folders of gone processes (or of a pid reused by a
// later one); a live process's folder and foreign names stay.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	self := stamp(os.Getpid())
	names := map[string]bool{
		Prefix + self + "-nginx-1":                             false,
		Prefix + strconv.Itoa(gone.Process.Pid) + ".1-nginx-2": true,
		Prefix + strconv.Itoa(os.Getpid()) + ".1-nginx-3":      true, // pid reused
		"cnperf-foreign":     false,
		Prefix + "x-nginx-4": false,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for _, p := range Leftovers(dir) {
		got[filepath.Base(p)] = true
	}
	for n, want := range names {
		if got[n] != want {
			t.Errorf("%s: leftover %v, want %v", n, got[n], want)
		}
	}
	var out strings.Builder
	if err := Clean(dir, &out); err != nil {
		t.Fatal(err)
	}
	for n, left := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) == left {
			t.Errorf("%s after clean: %v", n, err)
		}
	}
}
