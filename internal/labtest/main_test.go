package labtest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestBinaryHelper builds the agents' binary and prints its path; it is
// run by TestNoBinaryLeft in a child test process, else it does nothing.
func TestBinaryHelper(t *testing.T) {
	if os.Getenv("LABTEST_BINARY_HELPER") == "" {
		t.Skip("run by TestNoBinaryLeft")
	}
	fmt.Println("binary:", labtest.AgentBinary(t))
}

// TestNoBinaryLeft: a test process that built the agents' binary leaves no
// folder of it in the temporary folder when it exits (issue 11: every full
// test run left 18 folders of 14 MB).
func TestNoBinaryLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cnperf")
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBinaryHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "LABTEST_BINARY_HELPER=1", "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, path, ok := strings.Cut(string(out), "binary: ")
	path, _, _ = strings.Cut(path, "\n")
	if !ok || !strings.HasPrefix(path, tmp) {
		t.Fatalf("the child built no binary under %s: %s", tmp, out)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "*"))
	if len(left) > 0 {
		t.Errorf("left in the temporary folder: %v", left)
	}
}
