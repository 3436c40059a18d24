package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReplace: --out replaces a cnperf results file or an empty one;
// it refuses a symlink and any other file unless --force (issue 23,
// finding 4: an existing file was replaced silently, a symlink by a file).
func TestCheckReplace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prev := filepath.Join(dir, "prev.json")
	if err := (&Run{Schema: Schema}).Write(prev); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(prev, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		force      bool
		want       string // "" accepted
	}{
		{"new file", filepath.Join(dir, "new.json"), false, ""},
		{"empty file", write("empty.json", ""), false, ""},
		{"previous run", prev, false, ""},
		{"foreign JSON", write("other.json", `{"name": "not cnperf"}`), false, "not a cnperf results file"},
		{"schema not first", write("late.json", `{"x": 1, "schema": "cnperf/run/v1"}`), false, "not a cnperf results file"},
		{"text", write("notes.txt", "my notes\n"), false, "add --force"},
		{"text forced", filepath.Join(dir, "notes.txt"), true, ""},
		{"symlink", link, false, "is a symlink"},
		{"symlink forced", link, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReplace(tc.path, tc.force)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestResultsLock: a second run on one --out refuses in one line naming
// the first; the lock file goes when released, and one a killed run left
// is taken over (issue 23, finding 5: both runs wrote, one was lost).
func TestResultsLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same.json")
	l1, err := LockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockFile(path)
	if err == nil || !strings.Contains(err.Error(), "is writing it") || !strings.Contains(err.Error(), "pid ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second lock: %v, want one line naming the run that writes it", err)
	}
	l1.Release()
	l1.Release()
	if _, err := os.Stat(LockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left: %v", err)
	}
	// a lock file no process holds (a kill -9) is no obstacle
	if err := os.MkdirAll(filepath.Dir(LockPath(path)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(LockPath(path), []byte("99999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l2, err := LockFile(path)
	if err != nil {
		t.Fatalf("a stale lock file: %v", err)
	}
	l2.Release()
}

func TestUnusedPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run-1.json")
	if got := UnusedPath(p); got != p {
		t.Errorf("free path: %s", got)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LockFile(filepath.Join(dir, "run-1-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if got, want := UnusedPath(p), filepath.Join(dir, "run-1-3.json"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Issue 34 finding 4: a user's lock folder is at a fixed name in the
// shared temporary folder; one made first by another user, or a link, is
// refused instead of used.
func TestLockFolderMustBeOwn(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := ownFolder(own); err != nil {
		t.Errorf("own folder: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	bad := []string{link, open}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, other)
	}
	for _, d := range bad {
		if err := ownFolder(d); err == nil || !strings.Contains(err.Error(), "not this user's own") {
			t.Errorf("%s: %v", d, err)
		}
	}
}

// Issue 34 finding 8: a file without a schema (null, {}, another
// program's JSON) was told to be read "with the cnperf that wrote it".
func TestParseNotOurs(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"null", `not a cnperf results file (no "schema": "cnperf/run/v1" in it)`},
		{"{}", `not a cnperf results file (no "schema"`},
		{`{"name": "x"}`, `not a cnperf results file (no "schema"`},
		{`{"schema": null}`, `not a cnperf results file (no "schema"`},
		{`{"schema": "other/v1"}`, `not a cnperf results file (schema "other/v1", not "cnperf/run/v1")`},
		{`{"schema": "cnperf/run/v9"}`, `schema "cnperf/run/v9", this cnperf reads "cnperf/run/v1"; read it with the cnperf that wrote it`},
	} {
		_, err := Parse("f.json", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}
