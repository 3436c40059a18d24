package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
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
	if err := (&result.Run{Schema: result.Schema}).Write(prev); err != nil {
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
			err := checkReplace(tc.path, tc.force)
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
	l1, err := lockResults(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockResults(path)
	if err == nil || !strings.Contains(err.Error(), "is writing it") || !strings.Contains(err.Error(), "pid ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second lock: %v, want one line naming the run that writes it", err)
	}
	l1.release()
	l1.release()
	if _, err := os.Stat(lockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left: %v", err)
	}
	// a lock file no process holds (a kill -9) is no obstacle
	if err := os.MkdirAll(filepath.Dir(lockPath(path)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath(path), []byte("99999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l2, err := lockResults(path)
	if err != nil {
		t.Fatalf("a stale lock file: %v", err)
	}
	l2.release()
}

func TestUnusedPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run-1.json")
	if got := unusedPath(p); got != p {
		t.Errorf("free path: %s", got)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := lockResults(filepath.Join(dir, "run-1-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if got, want := unusedPath(p), filepath.Join(dir, "run-1-3.json"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestCellsStatus: a run with failed measurements exits 4 and lists them
// with their causes; one without exits 0 (issue 23, finding 2).
func TestCellsStatus(t *testing.T) {
	ok := result.Result{Network: "bridge", Placement: "same-host", Workload: "tcp_rr", Round: 1}
	bad := ok
	bad.Workload, bad.Error = "tcp_stream", "server on s1: its process 42 is stopped (SIGSTOP)"
	if err := cellsStatus(&result.Run{Results: []result.Result{ok, ok}}, "r.json"); err != nil {
		t.Fatalf("all measured: %v", err)
	}
	run := &result.Run{Results: []result.Result{ok, bad}}
	err := cellsStatus(run, "r.json")
	var ec exitCode
	if !errors.As(err, &ec) || ec != 4 || !strings.Contains(err.Error(), "1 of 2 measurements failed") {
		t.Fatalf("err %v (status %d), want exit 4 counting the failure", err, ec)
	}
	var b strings.Builder
	listFailed(&b, run)
	if !strings.Contains(b.String(), "bridge same-host tcp_stream round 1: server on s1: its process 42 is stopped") {
		t.Errorf("list %q, want the failed cell with its cause", b.String())
	}
}
