// Package labrun is the root integration test every network mode runs:
// build the mode in a fresh lab, check connectivity for every placement it
// allows with short workloads whose results must be sane, check that the
// placements it refuses are refused with a reason, and check that teardown
// left nothing behind. It runs plans on the lab backend alone: a network
// mode's test compiles no other backend.
package labrun

import (
	"context"
	"strings"
	"testing"
	"time"

	_ "github.com/cnperf/cnperf/internal/backend/labbackend" // the lab
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
)

// Plan returns a plan for cases with short durations and a unique lab id.
func Plan(tb testing.TB, cases []plan.Case, workloads ...string) plan.Plan {
	id := lab.NewID()
	// whatever happens to the test, nothing of its labs stays behind
	tb.Cleanup(func() { _, _ = lab.CleanRun(id, true) })
	return plan.Plan{
		Cases:     cases,
		Workloads: workloads,
		Params:    workload.Params{Duration: 400 * time.Millisecond},
		Lab:       lab.Config{ID: id},
		Agent:     []string{labtest.AgentBinary(tb), "agent"},
	}
}

// Mode is the standard integration test of one network mode.
func Mode(t *testing.T, name string) {
	labtest.NeedRoot(t)
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netmode.Check(m); err != nil {
		t.Skipf("this machine cannot build %s: %v", name, err)
	}
	for _, p := range ground.AllPlacements {
		ok, why := netmode.Allows(m, p)
		if !ok {
			if why == "" {
				t.Errorf("%s refuses %s without a reason", name, p)
			}
			continue
		}
		t.Run(string(p), func(t *testing.T) {
			plan := Plan(t, []plan.Case{{Network: name, Placement: p}}, "tcp_rr", "tcp_stream", "udp_rr")
			run := &result.Run{Environment: result.CaptureHost()}
			err := runner.Execute(context.Background(), plan, run)
			labtest.AssertClean(t, plan.Lab.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Results) != 3 {
				t.Fatalf("got %d results, want 3", len(run.Results))
			}
			for _, r := range run.Results {
				labtest.CheckSane(t, r)
			}
		})
	}
}

// Options tune Run.
type Options struct {
	Lab        lab.Config // ID is set by Run
	Duration   time.Duration
	Workloads  []string           // default tcp_rr, tcp_stream
	Placements []ground.Placement // default: every placement the mode allows
}

// Run builds mode name for real with the given options, runs the workloads
// on every placement, checks each result is sane and that nothing of the
// lab survived, and returns the run for further checks.
func Run(t testing.TB, name string, o Options) *result.Run {
	t.Helper()
	labtest.NeedRoot(t)
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netmode.CheckOpts(m, o.Lab.ModeOptions); err != nil {
		t.Skipf("this machine cannot build %s: %v", name, err)
	}
	if len(o.Workloads) == 0 {
		o.Workloads = []string{"tcp_rr", "tcp_stream"}
	}
	if len(o.Placements) == 0 {
		o.Placements = m.Placements()
	}
	var cases []plan.Case
	for _, p := range o.Placements {
		cases = append(cases, plan.Case{Network: name, Placement: p})
	}
	plan := Plan(t, cases, o.Workloads...)
	id := plan.Lab.ID
	plan.Lab = o.Lab
	plan.Lab.ID = id
	if o.Duration > 0 {
		plan.Params.Duration = o.Duration
	}
	plan.Log = testLog{t}
	run := &result.Run{Environment: result.CaptureHost()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = runner.Execute(ctx, plan, run)
	labtest.AssertClean(t, id)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(run.Skipped) > 0 {
		t.Fatalf("%s skipped: %s", name, run.Skipped[0].Reason)
	}
	if want := len(o.Placements) * len(o.Workloads); len(run.Results) != want {
		t.Fatalf("%s: %d results, want %d", name, len(run.Results), want)
	}
	for _, r := range run.Results {
		labtest.CheckSane(t, r)
	}
	return run
}

type testLog struct{ t testing.TB }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
