package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestStatStart(t *testing.T) {
	const rest = " 0 0 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 267001 1000 10"
	cases := []struct{ stat, want string }{
		{"29621 (cnperf) S 1" + rest, "267001"},
		{"29621 (a) b) c) S 1" + rest, "267001"}, // spaces and parentheses in the name
		{"29621 (cnperf) Z 1" + rest, ""},        // killed, not yet reaped: holds nothing
		{"29621 (cnperf) S", ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := statStart(c.stat); got != c.want {
			t.Errorf("statStart(%q) = %q, want %q", c.stat, got, c.want)
		}
	}
}

func TestOfRun(t *testing.T) {
	cases := []struct {
		id, run string
		want    bool
	}{
		{"abc", "abc", true}, {"abcs2", "abc", true}, {"abcs12", "abc", true},
		{"abcd", "abc", false}, {"abcs", "abc", false}, {"abcs2x", "abc", false}, {"ab", "abc", false},
	}
	for _, c := range cases {
		if got := OfRun(c.id, c.run); got != c.want {
			t.Errorf("OfRun(%q, %q) = %v", c.id, c.run, got)
		}
	}
}

// TestStateRootRemoved: the last lab's teardown, and clean, leave no
// empty state root behind (issue 11: an empty /run/cnperf stayed
// forever); a root that holds another run's folder stays.
func TestStateRootRemoved(t *testing.T) {
	old := StateRoot
	t.Cleanup(func() { StateRoot = old })
	StateRoot = filepath.Join(t.TempDir(), "cnperf")
	l, err := New(Config{ID: "t1", Exec: &Recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(StateRoot, "t1", "owner")); err != nil {
		t.Fatalf("the lab's state folder was not made: %v", err)
	}
	if err := l.Teardown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(StateRoot); !os.IsNotExist(err) {
		t.Errorf("teardown left the state root %s (err %v)", StateRoot, err)
	}

	// clean: a dead run's folder goes, then the root; another live one stays
	for _, id := range []string{"dead1", "dead1s2"} {
		if err := os.MkdirAll(filepath.Join(StateRoot, id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CleanRun("dead1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(StateRoot); !os.IsNotExist(err) {
		t.Errorf("clean left the state root %s (err %v)", StateRoot, err)
	}
	live := filepath.Join(StateRoot, "live1")
	if err := os.MkdirAll(live, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(live, "owner"), []byte(ownerStamp(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CleanRun("live1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("clean removed a live run's folder: %v", err)
	}
}
