package parallel_test

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

// TestParallelLab runs three TCP streams and three rr flows at once on
// bridge: three flows recorded per result, the aggregate is their sum,
// and Jain's index lies in [1/3, 1].
func TestParallelLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}}, "tcp_stream", "tcp_rr")
	plan.Options = map[string]string{"parallel": "3"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 2 {
		t.Fatalf("%d results, want 2", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Workload, r.Error)
		}
		if len(r.Flows) != 3 || r.Step != "flows=3" || r.Params["flows"] != 3 {
			t.Fatalf("%s: %d flows, step %q, params %v", r.Workload, len(r.Flows), r.Step, r.Params)
		}
		var sum int64
		for _, f := range r.Flows {
			if f.Bytes != nil {
				sum += *f.Bytes
			} else {
				sum += *f.Transactions
			}
		}
		total := r.Metrics.Bytes
		if total == nil {
			total = r.Metrics.Transactions
		}
		if *total != sum {
			t.Errorf("%s: aggregate %d, flows sum to %d", r.Workload, *total, sum)
		}
		if j := r.Metrics.Extra[result.ExtraJain]; j < 1.0/3-1e-9 || j > 1+1e-9 {
			t.Errorf("%s: Jain %v outside [1/3, 1]", r.Workload, j)
		}
	}
}
