package hostprobe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestKSoftirqd(t *testing.T) {
	stats := map[string]string{
		"1":   "1 (systemd) S 0 1 1 0 -1 4194560 9 0 0 0 500 700 0 0 20 0 1 0 3 0 0",
		"12":  "12 (ksoftirqd/0) S 2 0 0 0 -1 69238880 0 0 0 0 3 250 0 0 20 0 1 0 5 0 0",
		"20":  "20 (ksoftirqd/1) S 2 0 0 0 -1 69238880 0 0 0 0 0 150 0 0 20 0 1 0 5 0 0",
		"77":  "77 (my (ksoftirqd/9) prog) R 1 77 77 0 -1 0 0 0 0 0 9000 9000 0 0 20 0 1 0 5 0 0",
		"bad": "x",
	}
	dir := t.TempDir()
	for pid, s := range stats {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "stat"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// ksoftirqd/0 and /1: (3+250+0+150) ticks of 1/100 s; a process whose
	// name merely contains the word is not one of them
	if got, want := KSoftirqdSeconds(dir), 4.03; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("KSoftirqdSeconds = %v, want %v", got, want)
	}
	if got := KSoftirqdSeconds(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("no proc folder: %v, want 0", got)
	}
}
