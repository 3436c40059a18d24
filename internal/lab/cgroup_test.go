package lab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// pidsRoot is a hierarchy a test process can be moved into without setting
// anything up first: v1 "pids" or the v2 root.
func pidsRoot(t *testing.T) string {
	t.Helper()
	for _, r := range cgroupRoots() {
		if filepath.Base(r) == "pids" {
			return r
		}
		if _, err := os.Stat(filepath.Join(r, "cgroup.controllers")); err == nil && !strings.Contains(r, "unified") {
			return r
		}
	}
	t.Skip("no cgroup hierarchy to test with (v1 pids or v2)")
	return ""
}

// A dead run's cgroup cnperf-<id> (where the local Kubernetes cluster keeps
// its processes and pods) is emptied and removed by CleanRun; a live run's
// is kept unless forced.
func TestCleanRunCgroup(t *testing.T) {
	testutil.NeedRoot(t, "it creates cgroups")
	root := pidsRoot(t)
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			id := "cgtest" + NewID()
			dir := filepath.Join(root, RunCgroup(id))
			sub := filepath.Join(dir, "n1", "pod")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Skipf("cannot create cgroups here: %v", err)
			}
			sleep := exec.Command("sleep", "60")
			if err := sleep.Start(); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			exited := make(chan struct{})
			go func() { waitErr = sleep.Wait(); close(exited) }()
			t.Cleanup(func() {
				_ = sleep.Process.Kill()
				<-exited
				_ = removeRunCgroups(id)
				_ = os.RemoveAll(filepath.Join(StateRoot, id))
			})
			if err := os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte(fmt.Sprint(sleep.Process.Pid)), 0o644); err != nil {
				t.Fatalf("moving sleep into %s: %v", sub, err)
			}
			if live {
				if err := os.MkdirAll(filepath.Join(StateRoot, id), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(StateRoot, id, "owner"), []byte(ownerStamp(os.Getpid())), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			removed, err := CleanRun(id, false)
			if err != nil {
				t.Fatal(err)
			}
			if live {
				if len(removed) != 0 {
					t.Errorf("a live run's leftovers were removed: %+v", removed)
				}
				if _, err := os.Stat(sub); err != nil {
					t.Errorf("a live run's cgroup is gone: %v", err)
				}
				select {
				case <-exited:
					t.Fatalf("a live run's process was killed: %v", waitErr)
				default:
				}
				if removed, err = CleanRun(id, true); err != nil {
					t.Fatal(err)
				}
			}
			if len(removed) != 1 || removed[0].ID != id || !removed[0].Cgroup {
				t.Errorf("removed = %+v, want run %s with its cgroup", removed, id)
			}
			<-exited
			if waitErr == nil {
				t.Error("the process in the run's cgroup exited cleanly; it should have been killed")
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("cgroup %s left behind (stat: %v)", dir, err)
			}
		})
	}
}
