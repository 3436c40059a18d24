package alltoall_test

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestAllToAllLab exchanges among 2 and 4 pods of host-gw on one host and
// on two (1:N-1): every cell's pods exchanged exactly rounds·N·(N-1)
// messages (the workload fails the result otherwise).
func TestAllToAllLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: "same-host"}, {Network: "host-gw", Placement: "cross-host"}}, "alltoall")
	plan.Options = map[string]string{"pods": "2,4", "spread": "1:N-1"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 4 {
		t.Fatalf("%d results, want 4", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s %s: %s", r.Placement, r.Step, r.Error)
		}
		n := r.Params["pods"].(int)
		rounds := *r.Metrics.Transactions
		if want := rounds * int64(n*(n-1)); *r.Metrics.Messages != want || rounds < 2 {
			t.Errorf("%s %s: %d messages in %d rounds, want %d", r.Placement, r.Step, *r.Metrics.Messages, rounds, want)
		}
		if r.Metrics.LatencyUs["p50"] <= 0 || *r.Metrics.ThroughputBps <= 0 {
			t.Errorf("%s %s: figures %+v", r.Placement, r.Step, r.Metrics)
		}
	}
}
