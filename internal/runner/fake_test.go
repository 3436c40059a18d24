package runner_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/backendtest"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
)

// The fake backend is registered like any backend: one line.
func init() { backend.Register(backendtest.Info) }

// TestFakeBackendRuns: a backend registered in one line, that no code of
// cnperf names, is planned, deployed, measured in rounds and torn down by
// the one scheduler, its results recorded as any backend's.
func TestFakeBackendRuns(t *testing.T) {
	p := plan.Plan{
		BackendName: backendtest.Name,
		Cases:       []plan.Case{{Network: "host", Placement: ground.SameHost}, {Network: "host", Placement: ground.CrossHost}},
		Workloads:   []string{"tcp_rr"},
		Params:      workload.Params{Duration: 200 * time.Millisecond},
		Repeat:      2,
	}
	if !slices.Contains(plan.Backends(), backendtest.Name) {
		t.Fatalf("Backends() = %v, want the fake among them", plan.Backends())
	}
	run := &result.Run{Schema: result.Schema}
	if err := runner.Execute(context.Background(), p, run); err != nil {
		t.Fatal(err)
	}
	if got := backendtest.Live.Load(); got != 0 {
		t.Errorf("%d fake deployments left after the run, want 0", got)
	}
	if run.Environment.Backend != backendtest.Name {
		t.Errorf("environment backend %q, want %q", run.Environment.Backend, backendtest.Name)
	}
	n := 0
	for _, r := range run.Results {
		if r.Workload != "tcp_rr" || r.Error != "" {
			t.Errorf("result %s %s %s: error %q", r.Network, r.Placement, r.Workload, r.Error)
			continue
		}
		if r.Metrics.TransactionsPerS == nil || *r.Metrics.TransactionsPerS <= 0 {
			t.Errorf("result %s %s: no transactions measured", r.Network, r.Placement)
		}
		n++
	}
	if n != 4 { // two cases, two rounds
		t.Errorf("%d results, want 4 (2 cases x 2 rounds)", n)
	}
}

// TestFakeBackendRefusedWhereItCannot: the backend's own answers (no
// such network, no such capability) refuse a plan before anything runs.
func TestFakeBackendRefusedWhereItCannot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plan   plan.Plan
		errHas string
	}{
		{"network", plan.Plan{Cases: []plan.Case{{Network: "vxlan", Placement: ground.CrossHost}}, Workloads: []string{"tcp_rr"}}, `the fake backend has no network "vxlan"`},
		{"tuning", plan.Plan{Cases: []plan.Case{{Network: "host", Placement: ground.CrossHost}}, Workloads: []string{"tcp_rr"}, Options: map[string]string{"tuning": "none,study"}}, "the fake backend's are not cnperf's to tune"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.plan.BackendName = backendtest.Name
			err := tc.plan.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("Validate() = %v, want %q", err, tc.errHas)
			}
		})
	}
}

// TestCleanAsksTheBackend: clean goes through the backend's Cleaner, and
// every host-state cleaner is asked for each run it removed.
func TestCleanAsksTheBackend(t *testing.T) {
	var asked []string
	cleanup.RegisterHostState("test-cgroups", cleanup.Func(func(id string) error {
		asked = append(asked, id)
		return nil
	}))
	backendtest.CleanRemoves = []string{"r1", "r2"}
	t.Cleanup(func() { backendtest.CleanRemoves = nil })
	info, err := backend.Get(backendtest.Name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := cleanup.Run(context.Background(), info.Cleaner, cleanup.Request{ID: "r", Force: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	last := backendtest.Cleaned[len(backendtest.Cleaned)-1]
	if last.ID != "r" || !last.Force {
		t.Errorf("the fake was asked %+v, want id r, force", last)
	}
	if !slices.Equal(asked, []string{"r1", "r2"}) {
		t.Errorf("host-state cleaner asked for %v, want [r1 r2] (the runs the backend removed)", asked)
	}
	if !strings.Contains(out.String(), `fake: cleaned "r"`) {
		t.Errorf("output %q", out.String())
	}
}
