package bulk_test

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

// TestBulkLab uploads and downloads 32 MiB between two bridge pods: one
// result per direction, each the whole amount, timed.
func TestBulkLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}}, "tcp_bulk")
	plan.Params.Duration = 0 // the workload's cap
	plan.Params.Extra = map[string]string{"amount": "32MiB"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]bool{}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Step, r.Error)
		}
		steps[r.Step] = true
		if *r.Metrics.Bytes != 32<<20 || *r.Metrics.DurationS <= 0 {
			t.Errorf("%s: %d bytes in %vs", r.Step, *r.Metrics.Bytes, *r.Metrics.DurationS)
		}
	}
	if len(run.Results) != 2 || !steps["direction=up"] || !steps["direction=down"] {
		t.Errorf("steps %v, want up and down", steps)
	}
}
