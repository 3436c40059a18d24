package agent_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/workload"
)

// TestMain lets the test binary be an agent in a process of its own, as a
// backend starts one: a fault (SIGSTOP, SIGKILL) hits it, not the test.
func TestMain(m *testing.M) {
	if addr := os.Getenv("CNPERF_TEST_AGENT"); addr != "" {
		if err := agent.Serve(context.Background(), addr, os.Getppid()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startAgent runs an agent process and returns its client, Health set as
// the lab sets it.
func startAgent(t *testing.T) (*agent.Client, *os.Process) {
	t.Helper()
	addr := "unix:" + filepath.Join(t.TempDir(), "a.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CNPERF_TEST_AGENT="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c, _ := agent.NewClient(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := c.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pid != cmd.Process.Pid {
		t.Fatalf("agent says pid %d, started %d", pid, cmd.Process.Pid)
	}
	c.Health = agent.ProcessHealth(pid)
	if c.Health == nil {
		t.Fatal("no health check for a live process")
	}
	return c, cmd.Process
}

// TestFaultedAgent: an agent frozen or killed before or during a job ends
// the job within its deadline, naming the cause; the next job on it fails
// at once (issue 23, finding 1: a stopped agent hung the run).
func TestFaultedAgent(t *testing.T) {
	defer agent.SetGrace(1 * time.Second)()
	p := workload.Params{Duration: 400 * time.Millisecond, MessageSize: 16}
	slack := agent.Slack(p.Duration)
	for _, tc := range []struct {
		name   string
		signal syscall.Signal
		job    string // serve, run
		want   error
		words  string
	}{
		{"stopped/serve", syscall.SIGSTOP, "serve", agent.ErrStopped, "kill -CONT"},
		{"stopped/run", syscall.SIGSTOP, "run", agent.ErrStopped, "kill -CONT"},
		{"killed/serve", syscall.SIGKILL, "serve", agent.ErrExited, "has exited"},
		{"killed/run", syscall.SIGKILL, "run", agent.ErrExited, "has exited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, proc := startAgent(t)
			if err := proc.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			if tc.signal == syscall.SIGKILL {
				_, _ = proc.Wait()
			} else {
				waitStopped(t, proc.Pid)
			}
			job := func() error {
				if tc.job == "serve" {
					s, err := c.Serve(context.Background(), "tcp_rr", p)
					if err == nil {
						_, _ = s.Stop()
					}
					return err
				}
				_, err := c.Run(context.Background(), "tcp_rr", p, netip.MustParseAddrPort("127.0.0.1:1"))
				return err
			}
			limit := slack
			if tc.job == "run" {
				limit = agent.RunDeadline(p.Duration)
			}
			t0 := time.Now()
			err := job()
			took := time.Since(t0)
			if err == nil || !errors.Is(err, tc.want) || !errors.Is(err, agent.ErrNoAnswer) || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("err %v, want %v naming %q", err, tc.want, tc.words)
			}
			if took > limit+2*time.Second {
				t.Errorf("took %v, deadline %v", took, limit)
			}
			// the next job does not wait again
			t0 = time.Now()
			if err := job(); !errors.Is(err, tc.want) {
				t.Fatalf("second job: %v, want %v", err, tc.want)
			}
			if took := time.Since(t0); took > time.Second {
				t.Errorf("second job took %v; the cause was known", took)
			}
		})
	}
}

// TestStoppedServerReport: a server frozen mid-job gives no report; Stop
// returns within the slack, naming the cause.
func TestStoppedServerReport(t *testing.T) {
	defer agent.SetGrace(1 * time.Second)()
	c, proc := startAgent(t)
	p := workload.Params{Duration: 400 * time.Millisecond, MessageSize: 16, Port: freePort(t)}
	s, err := c.Serve(context.Background(), "tcp_rr", p)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, proc.Pid)
	t0 := time.Now()
	_, err = s.Stop()
	if err == nil || !errors.Is(err, agent.ErrStopped) {
		t.Fatalf("err %v, want the agent stopped", err)
	}
	if took := time.Since(t0); took > agent.Slack(p.Duration)+2*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestProcessHealthAlive: a live process is not blamed; no pid, no check.
func TestProcessHealthAlive(t *testing.T) {
	h := agent.ProcessHealth(os.Getpid())
	if h == nil {
		t.Fatal("no health for this process")
	}
	if err := h(context.Background()); err != nil {
		t.Fatalf("this process: %v", err)
	}
	if agent.ProcessHealth(0) != nil {
		t.Error("health for pid 0")
	}
}

// TestProcessHealthGone: a pid already gone when the check is made is
// reported exited (a local engine still calls its container running for a
// while after a kill), not passed over as unreadable.
func TestProcessHealthGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	h := agent.ProcessHealth(cmd.Process.Pid)
	if h == nil {
		t.Fatal("no health for a pid that is gone")
	}
	if err := h(context.Background()); !errors.Is(err, agent.ErrExited) {
		t.Fatalf("a pid that is gone: %v, want exited", err)
	}
}

// waitStopped waits until a signalled process is stopped: a signal is
// delivered asynchronously.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && strings.HasPrefix(s[i+1:], " T") {
			return
		}
	}
	t.Fatalf("process %d did not stop", pid)
}

// TestAliveNoGuess (issue 35 item 10): an agent that stops answering
// while its backend sees it alive (on Kubernetes a SIGSTOPped agent's pod
// stays Running) is reported with what is known, not a guessed cause; on
// ca57813 the message said "the machine may be overloaded".
func TestAliveNoGuess(t *testing.T) {
	for _, c := range []struct{ alive, want string }{
		{"its pod cnperf-a is Running", "no run report from the agent within 3s; the agent stopped answering while its pod cnperf-a is Running: no cause is known"},
		{"", "the agent stopped answering while it looks alive to its backend: no cause is known"},
	} {
		cl := &agent.Client{Health: func(context.Context) error { return nil }, Alive: c.alive}
		err := cl.Cause(context.DeadlineExceeded, "run report", 3*time.Second)
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "overloaded") || !errors.Is(err, agent.ErrNoAnswer) {
			t.Errorf("alive %q: %v, want %q", c.alive, err, c.want)
		}
	}
}
