package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

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

// Spawn starts a process inside a lab namespace and a cgroup of its own,
// in a session of its own (it outlives cnperf); StopRunCgroup gives it
// its grace period on SIGTERM and returns only once it has exited, its
// cgroups removed.
func TestSpawnStopRunCgroup(t *testing.T) {
	testutil.NeedRoot(t, "it creates namespaces and cgroups")
	id := "sp" + NewID()
	l, err := New(Config{ID: id, Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = removeRunCgroups(id)
		_ = l.Teardown()
	})
	if err := l.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	// on SIGTERM it takes a second (a child of its own meanwhile) before
	// it exits, as an API server finishing its requests would
	p, err := Spawn(Daemon{Name: "slow", NetNS: l.Hosts[0].NetNS, Cgroup: RunCgroup(id) + "/x", Log: filepath.Join(dir, "slow.log"),
		Argv: []string{"sh", "-c", `trap 'sleep 1; echo bye >` + marker + `; exit 0' TERM; echo ready >` + marker + `; while :; do sleep 0.05; done`}})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Cmd.Process.Pid
	var in bool
	for end := time.Now().Add(5 * time.Second); !in && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		in = slices.Contains(cgroupPIDs(runCgroupDirs(id)), pid)
	}
	if !in {
		t.Fatalf("process %d is not in cgroup %s", pid, RunCgroup(id))
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(marker); string(b) == "ready\n" {
			break
		}
	}
	var ns, want syscall.Stat_t
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if syscall.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &ns) == nil && syscall.Stat("/run/netns/"+l.Hosts[0].NetNS, &want) == nil && ns.Ino == want.Ino {
			break
		}
	}
	if ns.Ino != want.Ino {
		t.Errorf("process %d is not in namespace %s", pid, l.Hosts[0].NetNS)
	}
	if sid, _ := unixGetsid(pid); sid != pid {
		t.Errorf("process %d is in session %d, want a session of its own", pid, sid)
	}

	start := time.Now()
	if err := StopRunCgroup(id, 5*time.Second, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != "bye" {
		t.Errorf("StopRunCgroup returned after %v, before the process finished its SIGTERM handler (marker: %q, %v)", took, b, err)
	}
	if dirs := runCgroupDirs(id); len(dirs) > 0 {
		t.Errorf("cgroups left: %v", dirs)
	}
	select {
	case <-p.Done():
	case <-time.After(time.Second):
		t.Errorf("process %d still running after StopRunCgroup returned", pid)
	}
}

func unixGetsid(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		return 0, fmt.Errorf("short stat %q", s)
	}
	var sid int
	_, err = fmt.Sscan(f[3], &sid)
	return sid, err
}
