package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/result"
)

// chaos is one cnperf run a test breaks on purpose: its stderr is watched
// line by line so the fault lands at a known moment.
type chaos struct {
	t      *testing.T
	id     string
	out    string // --out
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr bytes.Buffer
	lines  chan string
	done   chan struct{}
	start  time.Time
	took   time.Duration
	status int
}

// startChaos starts `cnperf run ARGS --out OUT` with its own run id
// (prefix + a fresh one) and environment env.
func startChaos(t *testing.T, prefix, out string, env []string, args ...string) *chaos {
	t.Helper()
	return startChaosIn(t, prefix, out, env, nil, args...)
}

// startChaosIn is startChaos with the run's command line prefixed by
// wrap (ip netns exec NS, for a cluster reachable there alone).
func startChaosIn(t *testing.T, prefix, out string, env, wrap []string, args ...string) *chaos {
	t.Helper()
	c := &chaos{t: t, id: prefix + lab.NewID()[:6], out: out, lines: make(chan string, 1000), done: make(chan struct{})}
	argv := append(append(append([]string(nil), wrap...), cnperf(t), "run", "--out", out), args...)
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Env = append(append(os.Environ(), "CNPERF_RUN_ID="+c.id), env...)
	c.cmd.Stdout = &c.stdout
	errPipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.start = time.Now()
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		close(c.lines)
		err := c.cmd.Wait()
		c.took = time.Since(c.start)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.status = ee.ExitCode()
		}
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
			_, _ = exec.Command(cnperf(t), "clean", "--id", c.id, "--force").CombinedOutput()
		}
	})
	return c
}

// waitLine waits for a progress line containing s.
func (c *chaos) waitLine(s string, within time.Duration) {
	c.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the run ended before %q:\n%s", s, c.errText())
			}
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			c.t.Fatalf("no %q within %v:\n%s", s, within, c.errText())
		}
	}
}

func (c *chaos) errText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// wait waits for the run to end by itself within limit, and checks its
// status and that its stderr names the cause.
func (c *chaos) wait(limit time.Duration, status int, cause ...string) {
	c.t.Helper()
	go func() {
		for range c.lines {
		}
	}()
	select {
	case <-c.done:
	case <-time.After(limit):
		c.t.Fatalf("the run did not end within %v (it hangs):\n%s", limit, c.errText())
	}
	lines := strings.Split(strings.TrimSpace(c.errText()), "\n")
	c.t.Logf("the run ended in %v with status %d: %s", c.took.Round(100*time.Millisecond), c.status, lines[len(lines)-1])
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") && strings.Contains(l, ": ") && strings.Contains(l, "round 1:") {
			c.t.Logf("first failed: %s", strings.TrimSpace(l))
			break
		}
	}
	if c.status != status {
		c.t.Errorf("exit status %d, want %d:\n%s", c.status, status, c.errText())
	}
	for _, s := range cause {
		if !strings.Contains(c.errText(), s) {
			c.t.Errorf("stderr does not name %q:\n%s", s, c.errText())
		}
	}
}

// results reads --out: valid, with at least min results.
func (c *chaos) results(min int) *result.Run {
	c.t.Helper()
	r, err := result.Read(c.out)
	if err != nil {
		c.t.Fatalf("results file: %v", err)
	}
	if len(r.Results) < min {
		c.t.Errorf("%d results in the file, want at least %d", len(r.Results), min)
	}
	return r
}

// clean checks that nothing of the run is left: namespaces, state, its
// processes, its lock.
func (c *chaos) clean() {
	c.t.Helper()
	labtest.AssertClean(c.t, c.id)
	if _, err := os.Stat(result.LockPath(c.out)); err == nil {
		c.t.Errorf("lock %s left behind", result.LockPath(c.out))
	}
}

// agentPID is the pid of the lab agent of pod (c1, s1...) of the run's
// first lab.
func (c *chaos) agentPID(pod string) int {
	c.t.Helper()
	pids := labtest.ProcsMentioning(filepath.Join(lab.StateRoot, c.id, "agent-"+pod+".sock"))
	if len(pids) == 0 {
		c.t.Fatalf("no agent of pod %s in lab %s", pod, c.id)
	}
	pid, _ := strconv.Atoi(pids[0])
	return pid
}

// TestChaosLab breaks a lab run's agents (issue 23, findings 1 and 2): a
// frozen server agent (the run hung forever), a killed one (the run exited
// 0). Each run must end by itself within its deadlines, exit 4 with the
// failed cells listed and the cause named, keep a valid file with every
// cell, and leave nothing behind.
func TestChaosLab(t *testing.T) {
	labtest.NeedRoot(t)
	for _, tc := range []struct {
		name   string
		signal syscall.Signal
		cause  string
	}{
		{"sigstop", syscall.SIGSTOP, "is stopped (SIGSTOP)"},
		{"kill9", syscall.SIGKILL, "has exited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startChaos(t, "cs", filepath.Join(t.TempDir(), "r.json"), nil,
				"--networks", "bridge", "--no-baseline", "--workloads", "tcp_rr,tcp_stream", "--duration", "2s", "--repeat", "2")
			c.waitLine("round 1", time.Minute)
			time.Sleep(500 * time.Millisecond) // mid-cell
			pid := c.agentPID("s1")
			if err := syscall.Kill(pid, tc.signal); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
			// four cells of 2 s; the frozen one ends at 2 s + (10 s + 0.5 s)/2
			c.wait(2*time.Minute, 4, tc.cause, "failed: 4 of 4 measurements", "server on s1")
			r := c.results(4)
			if r.Incomplete || r.CellsDone != 4 {
				t.Errorf("file: incomplete %v, cells done %d; want a complete run of 4", r.Incomplete, r.CellsDone)
			}
			if !strings.Contains(c.stdout.String(), "tcp_rr") {
				t.Errorf("no table printed:\n%s", c.stdout.String())
			}
			c.clean()
		})
	}
}

// TestChaosFullDisk: --out on a tiny file system that fills (issue 23,
// finding 3: no table, a warning once and the run went on). The run
// stops at the failed write, prints the table, exits 1 naming the disk,
// and the file holds the cells of its last complete write.
func TestChaosFullDisk(t *testing.T) {
	labtest.NeedRoot(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "cnperf-chaos", dir).CombinedOutput(); err != nil {
		t.Skipf("mounting a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	c := startChaos(t, "cd", filepath.Join(dir, "r.json"), nil,
		"--networks", "bridge", "--no-baseline", "--workloads", "tcp_rr", "--duration", "200ms", "--repeat", "100")
	c.wait(3*time.Minute, 1, "no space left on device", "the run stopped")
	if !strings.Contains(c.stdout.String(), "tcp_rr trans/s") || !strings.Contains(c.stdout.String(), "results: not saved") {
		t.Errorf("the table or the unsaved note missing from stdout:\n%s", c.stdout.String())
	}
	r := c.results(1)
	if !r.Incomplete || len(r.Results) >= 100 {
		t.Errorf("file: incomplete %v with %d results; want the run stopped early, marked incomplete", r.Incomplete, len(r.Results))
	}
	if !strings.Contains(c.errText(), fmt.Sprintf("holds the %d results", len(r.Results))) {
		t.Errorf("stderr does not say the file holds its %d results:\n%s", len(r.Results), c.errText())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files on the file system, want the results alone (no temporary file)", len(ents))
	}
	c.clean()
}

// TestChaosSameOut: two runs on one --out (issue 23, finding 5: both
// said results: same.json, one run was lost). The second refuses in one
// line naming the first, exits 1 and builds nothing; the first finishes.
func TestChaosSameOut(t *testing.T) {
	labtest.NeedRoot(t)
	out := filepath.Join(t.TempDir(), "same.json")
	args := []string{"--networks", "host-gw", "--no-baseline", "--workloads", "tcp_rr", "--duration", "1s"}
	first := startChaos(t, "co", out, nil, args...)
	first.waitLine("ready in", time.Minute)
	second := startChaos(t, "co", out, nil, args...)
	second.wait(30*time.Second, 1, "is writing it", fmt.Sprintf("pid %d", first.cmd.Process.Pid))
	if n := strings.Count(strings.TrimSpace(second.errText()), "\n"); n != 0 {
		t.Errorf("the refusal is %d lines:\n%s", n+1, second.errText())
	}
	labtest.AssertClean(t, second.id)
	first.wait(time.Minute, 0)
	if r := first.results(1); r.Command[len(r.Command)-1] != "1s" || r.Incomplete {
		t.Errorf("the file is not the first run's, complete")
	}
	first.clean()
}

// needDocker skips t without a Docker engine at the default socket.
func needDocker(t *testing.T) {
	t.Helper()
	labtest.NeedRoot(t)
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Skipf("needs a Docker engine: %v: %s", err, out)
	}
}

// dockerLeft names the run's containers still on the engine.
func dockerLeft(t *testing.T, id string) string {
	out, _ := exec.Command("docker", "ps", "-a", "--filter", "label=cnperf.run="+id, "--format", "{{.Names}}").Output()
	return strings.TrimSpace(string(out))
}

// TestChaosDocker breaks a run on the Docker engine: the server's agent
// container removed (issue 23, finding 2: exit 0), paused, its process
// frozen (finding 1). Each run ends by itself, exits 4 naming the cause,
// keeps a valid file, and leaves no container.
func TestChaosDocker(t *testing.T) {
	needDocker(t)
	for _, tc := range []struct {
		name  string
		fault func(t *testing.T, container string)
		cause string
	}{
		// rm -f kills, then removes: a check between the two sees it exited
		{"rm", func(t *testing.T, ctr string) { dockerCmd(t, "rm", "-f", ctr) }, "server on s1: its container cnperf-"},
		{"pause", func(t *testing.T, ctr string) { dockerCmd(t, "pause", ctr) }, "is paused"},
		{"sigstop", func(t *testing.T, ctr string) {
			pid, err := strconv.Atoi(dockerCmd(t, "inspect", "-f", "{{.State.Pid}}", ctr))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
		}, "is stopped (SIGSTOP)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startChaos(t, "cx", filepath.Join(t.TempDir(), "r.json"), nil,
				"--backend", "docker", "--networks", "bridge", "--no-baseline", "--workloads", "tcp_rr,tcp_stream", "--duration", "2s", "--repeat", "2")
			t.Cleanup(func() {
				if left := dockerLeft(t, c.id); left != "" {
					_, _ = exec.Command(cnperf(t), "clean", "--backend", "docker", "--id", c.id, "--force").CombinedOutput()
				}
			})
			c.waitLine("round 1", 2*time.Minute)
			time.Sleep(500 * time.Millisecond)
			tc.fault(t, "cnperf-"+c.id+"-s1")
			c.wait(2*time.Minute, 4, tc.cause, "failed: ", "server on s1")
			c.results(4)
			if left := dockerLeft(t, c.id); left != "" {
				t.Errorf("containers left: %s", left)
			}
			if _, err := os.Stat("/run/cnperf-docker/" + c.id); err == nil {
				t.Errorf("control folder /run/cnperf-docker/%s left", c.id)
			}
			if _, err := os.Stat(result.LockPath(c.out)); err == nil {
				t.Error("results lock left")
			}
		})
	}
}

func dockerCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestChaosDockerLabEngine kills the Docker engine cnperf started on a
// docker-lab host while it builds (issue 23, finding 8: the answer was
// "start it (systemctl start docker ...)"). The run stops, exit 1, naming
// the engine as cnperf's own, and leaves nothing.
func TestChaosDockerLabEngine(t *testing.T) {
	labtest.NeedRoot(t)
	if _, err := exec.LookPath("dockerd"); err != nil {
		t.Skip("needs dockerd (apt-get install docker.io)")
	}
	c := startChaos(t, "ce", filepath.Join(t.TempDir(), "r.json"), nil,
		"--backend", "docker-lab", "--networks", "bridge", "--no-baseline", "--workloads", "tcp_rr", "--duration", "1s")
	c.waitLine("building bridge on docker-lab", 2*time.Minute)
	var pid int
	for end := time.Now().Add(time.Minute); pid == 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for _, p := range labtest.ProcsMentioning(filepath.Join(lab.StateRoot, c.id+"s0")) {
			if comm, _ := os.ReadFile("/proc/" + p + "/comm"); strings.TrimSpace(string(comm)) == "dockerd" {
				pid, _ = strconv.Atoi(p)
			}
		}
	}
	if pid == 0 {
		t.Fatal("no dockerd of the run")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// killed as it starts, or once it answers: either way named as cnperf's
	c.wait(2*time.Minute, 1, "the Docker engine cnperf started on lab host h1 has exited")
	if strings.Contains(c.errText(), "systemctl") {
		t.Errorf("the user is told to start their own engine:\n%s", c.errText())
	}
	labtest.AssertClean(t, c.id+"s0")
	c.clean()
}
