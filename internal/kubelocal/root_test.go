package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/testutil"
)

// testCluster is a cluster of a fresh run id (never the real "kube"),
// with its own lock, whose Up runs steps instead of the real ones, and
// which is removed after the test.
func testCluster(t *testing.T, id string, steps ...step) *Cluster {
	t.Helper()
	testutil.NeedRoot(t, "it creates namespaces and cgroups")
	c, err := New(Config{ID: id, Nodes: 1, Lock: filepath.Join(os.TempDir(), "cnperf-test-"+id+".lock"),
		Grace: 3 * time.Second, StopLimit: 2 * time.Second, Wait: 10 * time.Second, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	c.check, c.steps = nil, steps
	t.Cleanup(func() {
		_ = c.teardown()
		_ = os.Remove(c.cfg.Lock)
		// the logs a failed up keeps for its user (Up)
		kept, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnperf-"+id+"-failed-logs*"))
		for _, k := range kept {
			_ = os.RemoveAll(k)
		}
	})
	return c
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

var underlay = step{"underlay", (*Cluster).makeUnderlay}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Issue 23 finding 9: an up that lingers and then fails must not take
// down the cluster a newer up built after a `down`. Down waits for the
// running up (its lock) before it tears down, so the older up's failure
// and cleanup happen before the newer up starts.
func TestLingeringUpSparesNewerCluster(t *testing.T) {
	id := "kt" + lab.NewID()
	release := make(chan struct{})
	older := testCluster(t, id, underlay, step{"linger", func(*Cluster, context.Context) error {
		<-release
		return errors.New("the older up gave up")
	}})
	olderDone := make(chan error, 1)
	go func() { olderDone <- older.Up(context.Background()) }()
	sw := "/run/netns/" + older.NetNS("sw")
	for end := time.Now().Add(10 * time.Second); !exists(sw); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the older up made no underlay")
		}
	}

	down := testCluster(t, id)
	downDone := make(chan error, 1)
	go func() { downDone <- down.Down() }()
	newer := testCluster(t, id, underlay)
	select {
	case err := <-downDone:
		// down did not wait for the running up: the newer up builds
		// while the older one still lingers
		if err != nil {
			t.Fatal(err)
		}
		if err := newer.Up(context.Background()); err != nil {
			t.Fatalf("the newer up: %v", err)
		}
		close(release)
		<-olderDone
	case <-time.After(500 * time.Millisecond):
		close(release)
		if err := <-downDone; err != nil {
			t.Fatal(err)
		}
		if err := <-olderDone; err == nil || !strings.Contains(err.Error(), "the older up gave up") {
			t.Errorf("the older up: %v", err)
		}
		if err := newer.Up(context.Background()); err != nil {
			t.Fatalf("the newer up: %v", err)
		}
	}
	if !exists(sw) || !exists(newer.Dir()) {
		t.Errorf("the older up's failure removed the cluster the newer up built (switch there: %v, state folder there: %v)", exists(sw), exists(newer.Dir()))
	}
}

// A second up while one runs is refused at once, and touches nothing.
func TestSecondUpRefused(t *testing.T) {
	id := "kt" + lab.NewID()
	release := make(chan struct{})
	first := testCluster(t, id, underlay, step{"wait", func(*Cluster, context.Context) error { <-release; return nil }})
	firstDone := make(chan error, 1)
	go func() { firstDone <- first.Up(context.Background()) }()
	sw := "/run/netns/" + first.NetNS("sw")
	for end := time.Now().Add(10 * time.Second); !exists(sw); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the first up made no underlay")
		}
	}
	second := testCluster(t, id, step{"fail", func(*Cluster, context.Context) error { return errors.New("failed") }})
	start := time.Now()
	err := second.Up(context.Background())
	want := "(pid " + strconv.Itoa(os.Getpid()) + ") is running"
	if err == nil || !strings.Contains(err.Error(), want) || time.Since(start) > time.Second {
		t.Errorf("second up: %v after %v; want at once %q", err, time.Since(start), want)
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if !exists(sw) {
		t.Error("the refused up removed the first one's cluster")
	}
}

// Issue 23 finding 9: down returns only once every process of the
// cluster has exited. A process that takes a second to finish on SIGTERM
// (as kube-apiserver does) has finished when Down returns; one that
// outlives SIGKILL (frozen) makes Down fail naming it, keeping the
// cluster for another try, and not say "done".
func TestDownWaitsForProcesses(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		name := map[bool]string{false: "slow to exit", true: "frozen"}[frozen]
		t.Run(name, func(t *testing.T) {
			id := "kt" + lab.NewID()
			marker := filepath.Join(t.TempDir(), "marker")
			var p *lab.Proc
			c := testCluster(t, id, underlay, step{"daemon", func(c *Cluster, ctx context.Context) error {
				var err error
				p, err = c.spawn("slow", "n1", "n1-sys", 0, nil, "sh", "-c",
					`trap 'sleep 1; echo bye >`+marker+`; exit 0' TERM; echo ready >`+marker+`; while :; do sleep 0.05; done`)
				if err != nil {
					return err
				}
				return c.waitFor(ctx, "the daemon", "slow", func(context.Context) error {
					if b, _ := os.ReadFile(marker); string(b) != "ready\n" {
						return errors.New("not ready")
					}
					return nil
				})
			}})
			if err := c.Up(context.Background()); err != nil {
				t.Fatal(err)
			}
			freezer := "/sys/fs/cgroup/freezer/" + c.cgroup("n1-sys")
			if frozen {
				if !exists(freezer) {
					t.Skip("no cgroup v1 freezer here")
				}
				if err := os.WriteFile(freezer+"/freezer.state", []byte("FROZEN"), 0o644); err != nil {
					t.Skipf("cannot freeze: %v", err)
				}
				t.Cleanup(func() { _ = os.WriteFile(freezer+"/freezer.state", []byte("THAWED"), 0o644) })
			}
			start := time.Now()
			err := c.Down()
			took := time.Since(start)
			if frozen {
				if err == nil || !strings.Contains(err.Error(), "still in cgroup") || !strings.Contains(err.Error(), "sh") {
					t.Fatalf("down with a process that outlives SIGKILL: %v, want it to fail naming it", err)
				}
				if !exists(c.Dir()) || !exists("/run/netns/"+c.NetNS("n1")) {
					t.Error("a down that failed removed the state folder or the namespaces")
				}
				if err := os.WriteFile(freezer+"/freezer.state", []byte("THAWED"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := c.Down(); err != nil {
					t.Fatalf("down again, thawed: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(marker); string(b) != "bye\n" {
					t.Errorf("down returned after %v, before the process finished on SIGTERM (marker %q)", took, b)
				}
			}
			select {
			case <-p.Done():
			case <-time.After(time.Second):
				t.Errorf("process %d still running after down", p.Cmd.Process.Pid)
			}
			for _, left := range []string{c.Dir(), "/run/netns/" + c.NetNS("n1"), "/run/netns/" + c.NetNS("sw")} {
				if exists(left) {
					t.Errorf("left after down: %s", left)
				}
			}
			if cgs, _ := filepath.Glob("/sys/fs/cgroup/*/" + lab.RunCgroup(id)); len(cgs) > 0 {
				t.Errorf("cgroups left after down: %v", cgs)
			}
		})
	}
}

// A failed up removes everything it made and keeps its logs.
func TestFailedUpRemovesAll(t *testing.T) {
	id := "kt" + lab.NewID()
	c := testCluster(t, id, underlay, step{"daemon", func(c *Cluster, ctx context.Context) error {
		if _, err := c.spawn("dies", "n1", "n1-sys", 0, nil, "sh", "-c", "echo it went wrong; exit 3"); err != nil {
			return err
		}
		return c.waitFor(ctx, "the daemon", "dies", func(context.Context) error { return errors.New("never") })
	}})
	err := c.Up(context.Background())
	if err == nil || !strings.Contains(err.Error(), "dies exited (exit status 3): it went wrong") {
		t.Fatalf("up: %v, want the daemon's exit and last log line", err)
	}
	_, keep, _ := strings.Cut(err.Error(), "(logs in ")
	keep = strings.TrimSuffix(keep, ")")
	// remove only a folder of the name keepLogs makes: a path read from a
	// message must never lead to removing anything else (on the code
	// before issue 34 this path was /tmp/cnperf-ID-failed-logs, whose
	// parent is /tmp itself)
	prefix := filepath.Join(os.TempDir(), "cnperf-"+id+"-failed-logs-")
	if kept := filepath.Dir(keep); strings.HasPrefix(kept, prefix) && filepath.Base(keep) == "log" {
		t.Cleanup(func() { os.RemoveAll(kept) })
	}
	if b, _ := os.ReadFile(filepath.Join(keep, "dies.log")); string(b) != "it went wrong\n" {
		t.Errorf("kept log: %q", b)
	}
	// issue 34 finding 4: not a fixed name under /tmp (a link put there by
	// anyone would be followed by root), but a fresh folder only root reads
	if st, err := os.Stat(filepath.Dir(keep)); err != nil || st.Mode().Perm() != 0o700 ||
		filepath.Dir(keep) == filepath.Join(os.TempDir(), "cnperf-"+id+"-failed-logs") {
		t.Errorf("logs kept in %s (%v): want a fresh folder of mode 0700", keep, err)
	}
	if c.Exists() {
		t.Error("the failed up left its cluster")
	}
	if cgs, _ := filepath.Glob("/sys/fs/cgroup/*/" + lab.RunCgroup(id)); len(cgs) > 0 {
		t.Errorf("cgroups left: %v", cgs)
	}
}

// The parts of the cluster that need no Kubernetes binary, for real, on 2
// nodes of a run id of its own: etcd, containerd in each node's mount
// namespace running a container through runc, the pod network across
// nodes; nothing left afterwards.
func TestSelftest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts etcd and two containerds")
	}
	for _, b := range []string{"etcd", "etcdctl", "containerd", "runc", "ctr", "iperf3", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("no %s (scripts/install-deps.sh installs it)", b)
		}
	}
	id := "kt" + lab.NewID()
	c := testCluster(t, id, upSteps...)
	c.check = (*Cluster).preflight
	c.cfg.Src = "../.."
	c.cfg.Wait = time.Minute
	// the agent image: a small static program answering `/cnperf version`
	// as cnperf does (building cnperf itself takes minutes on a busy machine)
	for i, s := range c.steps {
		if s.name == "images" {
			c.steps[i].run = func(c *Cluster, ctx context.Context) error {
				dir := t.TempDir()
				files := map[string]string{
					"go.mod":  "module fake\n\ngo 1.22\n",
					"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"cnperf fake\") }\n",
				}
				for name, text := range files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
						return err
					}
				}
				for _, b := range []struct{ dir, out, image, tar string }{
					{filepath.Join(c.cfg.Src, "kube"), "pause", PauseImage, "pause.tar"},
					{dir, "cnperf", AgentImage, "agent.tar"},
				} {
					bin := filepath.Join(t.TempDir(), b.out)
					pkg := "."
					if b.out == "pause" {
						pkg = "./pause"
					}
					cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
					cmd.Dir, cmd.Env = b.dir, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
					if out, err := cmd.CombinedOutput(); err != nil {
						return fmt.Errorf("%v: %s", err, out)
					}
					if err := writeImage(filepath.Join(c.Dir(), "images", b.tar), b.image, bin); err != nil {
						return err
					}
				}
				return nil
			}
		}
	}
	if err := c.Selftest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Exists() {
		t.Error("selftest left its cluster")
	}
	if cgs, _ := filepath.Glob("/sys/fs/cgroup/*/" + lab.RunCgroup(id)); len(cgs) > 0 {
		t.Errorf("cgroups left: %v", cgs)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), c.Dir()) {
		t.Error("mounts left under the state folder")
	}
}

// Issue 34 finding 4: the image builds of up run in the cluster's cgroup
// and keep their files in its state folder, so that an up killed while
// building leaves neither a `go build` running nor a folder under /tmp
// that down and clean do not find. A fake go records where it ran.
func TestImageBuildInsideTheCluster(t *testing.T) {
	id := "kt" + lab.NewID()
	c := testCluster(t, id)
	c.cfg.Src = "../.."
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "record")
	fake := "#!/bin/sh\ncat /proc/self/cgroup >" + record + "\necho \"GOTMPDIR=$GOTMPDIR\" >>" + record + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	if err := os.MkdirAll(c.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.buildImages(context.Background()); err == nil {
		t.Fatal("the fake go build failed, buildImages did not")
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "/"+lab.RunCgroup(id)+"/images\n") {
		t.Errorf("go build ran outside the cluster's cgroup %s/images:\n%s", lab.RunCgroup(id), b)
	}
	if !strings.Contains(string(b), "GOTMPDIR="+c.Dir()+"/") {
		t.Errorf("go build's work folders are not in the state folder %s:\n%s", c.Dir(), b)
	}
}

// Issue 34 finding 7: after an up killed before the control plane,
// status said "no cluster up" while up said one was; after one killed
// while starting nodes, status exited 0 with 1 of 2 nodes. A fake
// kubectl answers for the cluster.
func TestStatusOfAnUnfinishedCluster(t *testing.T) {
	id := "kt" + lab.NewID()
	c := testCluster(t, id)
	if err := os.MkdirAll(c.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := c.Status(context.Background(), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "left over") || !strings.Contains(err.Error(), "cnperf cluster down") {
		t.Errorf("status of a cluster killed before its control plane: %v, want it called left over", err)
	}
	if err := os.RemoveAll(c.Dir()); err != nil {
		t.Fatal(err)
	}
	c.steps = []step{underlay}
	if err := c.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	// up made the underlay: now a kubectl that sees 1 node Ready of the 2
	bin := t.TempDir()
	kubectl := "#!/bin/sh\ncase \"$*\" in *jsonpath*) printf 'True False ';; *) echo NAME STATUS;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(kubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"bin": bin, "nodes": "2"} {
		if err := os.WriteFile(filepath.Join(c.Dir(), f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err = c.Status(context.Background(), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 nodes Ready") {
		t.Errorf("status with 1 of 2 nodes Ready: %v", err)
	}
	if err := os.Remove(filepath.Join(c.Dir(), "up-done")); err != nil {
		t.Fatal(err)
	}
	err = c.Status(context.Background(), &out, &out)
	if err == nil || !strings.Contains(err.Error(), "ended before the cluster was Ready") {
		t.Errorf("status of a cluster whose up was killed: %v", err)
	}
}
