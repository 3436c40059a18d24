package campaign

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
)

// TestLeftoversFinds: the check sees a process started for the run (its
// id in the environment), its state folder and a lab beside it, and
// nothing of another run whose id starts the same.
func TestLeftoversFinds(t *testing.T) {
	old := lab.StateRoot
	t.Cleanup(func() { lab.StateRoot = old })
	lab.StateRoot = t.TempDir()
	id := "zzleft" + lab.NewID()
	for _, d := range []string{id + "s2", id + "x"} {
		if err := os.Mkdir(filepath.Join(lab.StateRoot, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), "CNPERF_RUN_ID="+id)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	left := strings.Join(Leftovers(id), "\n")
	for _, want := range []string{"state folder " + filepath.Join(lab.StateRoot, id+"s2"), "process " + strconv.Itoa(cmd.Process.Pid) + " (sleep 60)"} {
		if !strings.Contains(left, want) {
			t.Errorf("leftovers %q do not name %q", left, want)
		}
	}
	if strings.Contains(left, id+"x") {
		t.Errorf("another run's folder counted: %q", left)
	}
}
