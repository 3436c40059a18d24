// Package labtest holds what the lab's root tests share: skipping without
// root (NeedRoot), the cnperf binary the agents run (AgentBinary, Main),
// checking that a result is sane and that a lab left nothing behind, and
// the golden files of the commands a network mode runs. It runs no plan:
// package labtest/labrun does (the standard test every network mode
// runs), so a test of these helpers compiles no runner and no backend.
package labtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/tmpdir"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all" // every workload
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
	mainRuns  bool
)

// Main runs a test package's tests, then removes the cnperf binary that
// AgentBinary built for them. Every test package that runs agents
// (AgentBinary, Plan, Mode, Run) declares
//
//	func TestMain(m *testing.M) { labtest.Main(m) }
//
// so that no test run leaves a binary in the temporary folder.
func Main(m *testing.M) {
	mainRuns = true
	code := m.Run()
	if binDir != "" {
		if err := os.RemoveAll(binDir); err != nil {
			fmt.Fprintln(os.Stderr, "labtest:", err)
		}
	}
	os.Exit(code)
}

// NeedRoot skips t unless it runs as root with iproute2.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	testutil.NeedRoot(tb, "the lab creates network namespaces")
	if _, err := exec.LookPath("ip"); err != nil {
		tb.Skip("needs iproute2 (apt-get install iproute2)")
	}
}

// AgentBinary builds cnperf once per test process, into a temporary folder
// that Main removes when the tests end, and returns its path.
func AgentBinary(tb testing.TB) string {
	tb.Helper()
	if !mainRuns {
		tb.Fatal("labtest.AgentBinary: this test package must declare func TestMain(m *testing.M) { labtest.Main(m) }, which removes the binary afterwards")
	}
	buildOnce.Do(func() {
		binDir, buildErr = tmpdir.Make("test-bin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "cnperf")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/cnperf/cnperf/cmd/cnperf").CombinedOutput()
		if err != nil {
			buildErr = &buildError{string(out), err}
		}
	})
	if buildErr != nil {
		tb.Fatalf("building cnperf for the agents: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// OfRun reports whether lab id belongs to run: the run's first lab has
// the run id itself, the labs beside it the run id, "s" and a number.
func OfRun(id, run string) bool { return lab.OfRun(id, run) }

// AssertClean fails tb if anything of run id's labs is still on the machine.
func AssertClean(tb testing.TB, id string) {
	tb.Helper()
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		labID, _, _ := strings.Cut(strings.TrimPrefix(e.Name(), lab.Prefix), "-")
		if strings.HasPrefix(e.Name(), lab.Prefix) && OfRun(labID, id) {
			tb.Errorf("namespace %s left behind", e.Name())
		}
	}
	dirs, _ := os.ReadDir(lab.StateRoot)
	for _, d := range dirs {
		if OfRun(d.Name(), id) {
			tb.Errorf("state folder %s left behind", filepath.Join(lab.StateRoot, d.Name()))
			continue
		}
	}
	for _, d := range append([]string{id}, siblings(id)...) {
		if pids := ProcsMentioning(filepath.Join(lab.StateRoot, d)); len(pids) > 0 {
			tb.Errorf("processes %v of the lab %s still running", pids, d)
		}
	}
}

// siblings are the ids of the labs a run may stand beside its first.
func siblings(id string) []string {
	var out []string
	for i := 2; i <= 40; i++ {
		out = append(out, id+"s"+strconv.Itoa(i))
	}
	return out
}

// ProcsMentioning lists processes whose command line mentions the path s:
// s itself or a path under it, not a longer name that starts with s
// (another lab's /run/cnperf/abcd is not /run/cnperf/abc).
func ProcsMentioning(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if e.Name() == self || e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && mentions(string(b), s) {
			out = append(out, e.Name())
		}
	}
	return out
}

// mentions says whether a NUL-separated command line names path s or a
// path under it.
func mentions(cmdline, s string) bool {
	for rest := strings.ReplaceAll(cmdline, "\x00", " "); ; {
		i := strings.Index(rest, s)
		if i < 0 {
			return false
		}
		rest = rest[i+len(s):]
		if rest == "" || rest[0] == '/' || rest[0] == ' ' || rest[0] == ':' || rest[0] == '=' {
			return true
		}
	}
}

// CheckSane fails t if a result has an error or implausible figures.
func CheckSane(t testing.TB, r result.Result) {
	t.Helper()
	if r.Error != "" {
		t.Errorf("%s %s %s: %s", r.Network, r.Placement, r.Workload, r.Error)
		return
	}
	m := r.Metrics
	if m.CPU != nil { // a backend on this machine: the witness of its speed beside the cell
		checkSpeed(t, r)
	}
	var figs []result.Figure
	if w, err := workload.Get(r.Workload); err == nil {
		figs = w.Figures()
	}
	switch {
	case slices.Contains(figs, result.FigThroughput):
		if m.ThroughputBps == nil || *m.ThroughputBps < 1e6 {
			t.Errorf("%s %s %s: throughput %s bit/s, want > 1 Mbit/s", r.Network, r.Placement, r.Workload, fmtPtr(m.ThroughputBps))
		}
	case slices.Contains(figs, result.FigTransactions):
		if m.TransactionsPerS == nil || *m.TransactionsPerS < 100 {
			t.Errorf("%s %s %s: %s trans/s, want > 100", r.Network, r.Placement, r.Workload, fmtPtr(m.TransactionsPerS))
		}
		if m.LatencyUs["p50"] <= 0 || m.LatencyUs["p50"] > m.LatencyUs["p99"] || m.LatencyUs["p99"] > m.LatencyUs["max"] {
			t.Errorf("%s %s %s: latency percentiles out of order: %v", r.Network, r.Placement, r.Workload, m.LatencyUs)
		}
		if r.Histogram == "" {
			t.Errorf("%s %s %s: no histogram", r.Network, r.Placement, r.Workload)
		}
	}
}

// checkSpeed checks a result's witness of the machine's speed: a probe
// before and after the cell, each CPU timed, and the share of the CPUs
// left to the cell.
func checkSpeed(t testing.TB, r result.Result) {
	t.Helper()
	ms := r.MachineSpeed
	if ms == nil || ms.Before == nil || ms.After == nil {
		t.Errorf("%s %s %s: no machine_speed probes: %+v", r.Network, r.Placement, r.Workload, ms)
		return
	}
	for _, p := range []*result.SpeedProbe{ms.Before, ms.After} {
		if len(p.CPUs) == 0 || p.S <= 0 {
			t.Errorf("%s %s %s: empty probe %+v", r.Network, r.Placement, r.Workload, p)
		}
		for _, c := range p.CPUs {
			if c.CPU < 0 || c.SpinNs <= 0 {
				t.Errorf("%s %s %s: CPU not probed: %+v", r.Network, r.Placement, r.Workload, c)
			}
		}
	}
	if ms.Share <= 0 || ms.Share > 1 || len(ms.StealS) != len(ms.Before.CPUs) {
		t.Errorf("%s %s %s: share %v, steal %v", r.Network, r.Placement, r.Workload, ms.Share, ms.StealS)
	}
}

// fmtPtr prints a figure that may be missing.
func fmtPtr(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%.4g", *v)
}
