package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestBuildCases(t *testing.T) {
	cases := []struct {
		name       string
		networks   []string
		placements []string
		want       []runner.Case
		err        string
	}{
		{"natural placement plus baseline", []string{"vxlan"}, nil,
			[]runner.Case{{Network: "baseline", Placement: netmode.CrossHost}, {Network: "vxlan", Placement: netmode.CrossHost}}, ""},
		{"explicit", []string{"host", "vxlan"}, []string{"cross-host"},
			[]runner.Case{{Network: "baseline", Placement: netmode.CrossHost}, {Network: "host", Placement: netmode.CrossHost}, {Network: "vxlan", Placement: netmode.CrossHost}}, ""},
		{"refused", []string{"bridge"}, []string{"cross-host"}, nil, "single-host"},
		{"none cross", []string{"none"}, []string{"cross-host"}, nil, "loopback only"},
		{"same-pod has no baseline", []string{"container"}, nil,
			[]runner.Case{{Network: "container", Placement: netmode.SamePod}}, ""},
		{"unknown network", []string{"flanel"}, nil, nil, "unknown network"},
		{"unknown placement", []string{"vxlan"}, []string{"far"}, nil, "unknown placement"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := buildCases(c.networks, c.placements, false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func cnperf(t *testing.T) string { return labtest.AgentBinary(t) }

// TestBadInput checks that bad input gives one line naming the problem, a
// non-zero exit, and leaves nothing behind.
func TestBadInput(t *testing.T) {
	bin := cnperf(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--networks", "nope"}, "unknown network"},
		{[]string{"run", "--workloads", "tcp_nope"}, "unknown workload"},
		{[]string{"run", "--networks", "bridge", "--placement", "cross-host"}, "single-host"},
		{[]string{"run", "--networks", "none", "--placement", "cross-host"}, "loopback only"},
		{[]string{"run", "--duration", "fast"}, "invalid value"},
		{[]string{"run", "--message-size", "-3"}, "message size"},
		{[]string{"run", "--mtu", "99"}, "MTU"},
		{[]string{"run", "--bogus"}, "not defined"},
		{[]string{"run", "extra"}, "unexpected argument"},
		{[]string{"run", "--suite", "nope"}, "unknown suite"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"load", "pace"}, "name the rates"},
		{[]string{"load", "pace", "--rate", "10k"}, "positive whole numbers"},
		{[]string{"load", "pace", "--rate", "1000", "--threads", "0"}, "must be positive"},
		// found by the adversarial probe (issue 11)
		{[]string{"run", "--networks", ","}, "names nothing"},
		{[]string{"run", "--workloads", " , "}, "names nothing"},
		{[]string{"run", "--duration", "0"}, "--duration 0: use a positive value"},
		{[]string{"run", "--repeat", "0"}, "--repeat 0: use a positive value"},
		{[]string{"run", "--message-size", "0"}, "--message-size 0: use a positive value"},
		{[]string{"run", "--networks", "host", "--out", "/nonexistent/dir/x.json"}, "does not exist; create it first"},
		{[]string{"run", "--networks", "host", "--out", "/proc/version"}, "cannot write results under /proc"},
		{[]string{"run", "--networks", "host", "--out", "/tmp"}, "not a regular file"},
		{[]string{"run", "--networks", "host", "RUNID=" + strings.Repeat("a", 200)}, "use at most 24"},
		// the docker backend (issue 14)
		{[]string{"run", "--backend", "podman", "--networks", "bridge"}, `unknown backend "podman"`},
		{[]string{"run", "--backend", "docker", "--workloads", "tcp_rr"}, "name the networks to run"},
		{[]string{"run", "--backend", "docker", "--networks", "vxlan"}, `docker backend has no network "vxlan"`},
		{[]string{"run", "--backend", "docker", "--networks", "bridge", "--placement", "cross-host"}, "one Docker engine is one host"},
		{[]string{"run", "--backend", "docker", "--networks", "bridge", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, "no Docker engine reachable"},
		{[]string{"clean", "--backend", "docker", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, "no Docker engine reachable"},
	}
	for i, c := range cases {
		id := fmt.Sprintf("bad%d%s", i, lab.NewID())
		if last := c.args[len(c.args)-1]; strings.HasPrefix(last, "RUNID=") {
			id = strings.TrimPrefix(last, "RUNID=")
			c.args = c.args[:len(c.args)-1]
		}
		var env []string
		if last := c.args[len(c.args)-1]; strings.HasPrefix(last, "DOCKER_HOST=") {
			env = append(env, last)
			c.args = c.args[:len(c.args)-1]
		}
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(append(os.Environ(), "CNPERF_RUN_ID="+id), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			t.Errorf("%v: exit 0, want failure", c.args)
			continue
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Count(msg, "\n") > 0 || !strings.Contains(msg, c.want) {
			t.Errorf("%v: stderr %q, want one line containing %q", c.args, msg, c.want)
		}
		if strings.Contains(namespaces(), "cnperf-"+id) {
			t.Errorf("%v left namespaces behind: %s", c.args, namespaces())
		}
		if _, err := os.Stat("/nonexistent"); err == nil {
			t.Errorf("%v created /nonexistent", c.args)
		}
	}
}

func TestNotRoot(t *testing.T) {
	labtest.NeedRoot(t) // to switch to another user
	bin := cnperf(t)
	dir, err := os.MkdirTemp("", "cnperf-notroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	nb := filepath.Join(dir, "cnperf")
	b, _ := os.ReadFile(bin)
	if err := os.WriteFile(nb, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	cmd := exec.Command(nb, "run", "--networks", "vxlan")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs root") {
		t.Fatalf("as nobody: err %v, output %q; want a 'needs root' error", err, out)
	}
}

func namespaces() string {
	ents, _ := os.ReadDir("/run/netns")
	var n []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "cnperf-") {
			n = append(n, e.Name())
		}
	}
	return strings.Join(n, " ")
}

var labID = regexp.MustCompile(`\(lab ([0-9a-f]+)\)`)

// startRun starts a cnperf run and returns once its lab is up, with its id.
func startRun(t *testing.T, args ...string) (*exec.Cmd, string) {
	cmd := exec.Command(cnperf(t), append([]string{"run", "--out", filepath.Join(t.TempDir(), "r.json")}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	id := ""
	deadline := time.Now().Add(30 * time.Second)
	for sc.Scan() && time.Now().Before(deadline) {
		if m := labID.FindStringSubmatch(sc.Text()); m != nil {
			id = m[1]
		}
		if strings.Contains(sc.Text(), "ready in") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if id == "" {
		_ = cmd.Process.Kill()
		t.Fatal("the run never reported its lab")
	}
	time.Sleep(300 * time.Millisecond) // mid-measurement
	return cmd, id
}

func TestInterruptTearsDown(t *testing.T) {
	labtest.NeedRoot(t)
	cmd, id := startRun(t, "--networks", "vxlan", "--duration", "5s", "--no-baseline")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil {
		t.Error("an interrupted run exited 0")
	}
	labtest.AssertClean(t, id)
}

func TestKill9ThenClean(t *testing.T) {
	labtest.NeedRoot(t)
	cmd, id := startRun(t, "--networks", "nat", "--duration", "5s", "--no-baseline")
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !strings.Contains(namespaces(), "cnperf-"+id+"-") {
		t.Fatal("expected the killed run's namespaces to be left for clean")
	}
	// --id: other packages' tests run labs concurrently; leave them be
	out, err := exec.Command(cnperf(t), "clean", "--id", id).CombinedOutput()
	if err != nil {
		t.Fatalf("clean: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "removed run "+id) {
		t.Errorf("clean output %q does not mention run %s", out, id)
	}
	labtest.AssertClean(t, id)
}

func TestMissingCommand(t *testing.T) {
	labtest.NeedRoot(t)
	dir := t.TempDir()
	for _, c := range []string{"ip", "sysctl"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	id := "miss" + lab.NewID()
	cmd := exec.Command(cnperf(t), "run", "--networks", "nat")
	cmd.Env = append(os.Environ(), "PATH="+dir, "CNPERF_RUN_ID="+id)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "apt-get install iptables") {
		t.Fatalf("err %v, output %q; want the missing iptables named with its fix", err, out)
	}
	if strings.Contains(namespaces(), "cnperf-"+id+"-") {
		t.Errorf("left namespaces behind: %q", namespaces())
	}
}
