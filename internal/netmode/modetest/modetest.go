// Package modetest runs a network mode end to end for root integration
// tests: a real lab, every placement the mode allows, short tcp_rr and
// tcp_stream runs through real agents, and a check that teardown left
// nothing behind. The test binary doubles as the agent (see Main), so no
// cnperf binary has to be built first.
package modetest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
	_ "github.com/cnperf/cnperf/internal/workload/all" // tcp_rr, tcp_stream
)

const agentEnv = "CNPERF_MODETEST_AGENT"

// Main is a test package's TestMain: when the binary was started as an
// agent inside a lab pod it serves, otherwise it runs the tests.
func Main(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		fs := flag.NewFlagSet("agent", flag.ExitOnError)
		listen := fs.String("listen", "", "")
		parent := fs.Int("parent", 0, "")
		_ = fs.Parse(os.Args[1:])
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := agent.Serve(ctx, *listen, *parent); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// NeedRoot skips t unless it runs as root.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root: builds network namespaces")
	}
}

// Options tune Run.
type Options struct {
	Lab        lab.Config // Name, ID, Exec are set by Run
	Duration   time.Duration
	Workloads  []string
	Placements []netmode.Placement // default: every placement the mode allows
}

// Run builds mode name for real, runs the workloads on every placement and
// checks each produced a figure, then checks that no namespace or state
// folder of the lab survived. It returns the results for further checks.
func Run(t *testing.T, name string, o Options) *result.Run {
	t.Helper()
	NeedRoot(t)
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netmode.Check(m); err != nil {
		t.Skipf("this machine cannot build %s: %v", name, err)
	}
	if o.Duration == 0 {
		o.Duration = 500 * time.Millisecond
	}
	if len(o.Workloads) == 0 {
		o.Workloads = []string{"tcp_rr", "tcp_stream"}
	}
	if len(o.Placements) == 0 {
		o.Placements = m.Placements()
	}
	cfg := o.Lab
	cfg.ID = "t" + lab.NewID()
	var cases []runner.Case
	for _, p := range o.Placements {
		cases = append(cases, runner.Case{Network: name, Placement: p})
	}
	t.Setenv(agentEnv, "1")
	plan := runner.Plan{
		Cases: cases, Workloads: o.Workloads,
		Params: workload.Params{Duration: o.Duration},
		Lab:    cfg, Agent: []string{os.Args[0]},
		Log: testLog{t},
	}
	run := &result.Run{Environment: result.Environment{Sysctls: map[string]string{}}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = runner.Execute(ctx, plan, run)
	AssertClean(t, cfg.ID)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(run.Skipped) > 0 {
		t.Fatalf("%s skipped: %s", name, run.Skipped[0].Reason)
	}
	want := len(o.Placements) * len(o.Workloads)
	if len(run.Results) != want {
		t.Fatalf("%s: %d results, want %d", name, len(run.Results), want)
	}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Errorf("%s %s %s: %s", name, r.Placement, r.Workload, r.Error)
			continue
		}
		mt := r.Metrics
		switch {
		case mt.TransactionsPerS != nil && *mt.TransactionsPerS <= 0,
			mt.ThroughputBps != nil && *mt.ThroughputBps <= 0,
			mt.TransactionsPerS == nil && mt.ThroughputBps == nil:
			t.Errorf("%s %s %s: no traffic measured", name, r.Placement, r.Workload)
		}
	}
	return run
}

// AssertClean fails t if lab id left a namespace, a state folder, or a
// process whose command line mentions the state folder.
func AssertClean(tb testing.TB, id string) {
	tb.Helper()
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), lab.Prefix+id+"-") {
			tb.Errorf("namespace %s left behind", e.Name())
		}
	}
	dir := filepath.Join(lab.StateRoot, id)
	if _, err := os.Stat(dir); err == nil {
		tb.Errorf("state folder %s left behind", dir)
	}
	if pids := ProcsMentioning(dir); len(pids) > 0 {
		tb.Errorf("processes %v still run with %s on their command line", pids, dir)
	}
}

// ProcsMentioning lists processes whose command line contains s.
func ProcsMentioning(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	self := fmt.Sprint(os.Getpid())
	for _, e := range ents {
		if e.Name() == self || e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			out = append(out, e.Name())
		}
	}
	return out
}

type testLog struct{ t *testing.T }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
