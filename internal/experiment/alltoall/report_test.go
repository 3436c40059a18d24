package alltoall

import (
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	_ "github.com/cnperf/cnperf/internal/workload/all"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
)

// The page's section: a line per network and placement against the pods,
// each point the median of its rounds; results without pods are not in it.
func TestHTML(t *testing.T) {
	var run result.Run
	for _, n := range []int{2, 4} {
		for round, v := range []float64{100, 300, 200} {
			m := result.Metrics{LatencyUs: map[string]float64{"p50": v * float64(n), "p99": 2 * v * float64(n)}}
			run.Results = append(run.Results, result.Result{Network: "vxlan", Placement: "same-host", Workload: a2a.Name,
				Round: round + 1, Params: map[string]any{"pods": float64(n)}, Metrics: m})
		}
	}
	run.Results = append(run.Results, result.Result{Network: "vxlan", Placement: "same-host", Workload: "tcp_rr"})
	sec := HTML([]section.Input{{Name: "r", Run: &run}})
	if len(sec.Charts) == 0 {
		t.Fatal("no chart")
	}
	c := sec.Charts[0]
	if len(c.Series) != 1 || c.Series[0].Label != "vxlan same-host" || len(c.Series[0].Points) != 2 {
		t.Fatalf("series %+v", c.Series)
	}
	for i, want := range []struct{ pods, p50 float64 }{{2, 400}, {4, 800}} {
		if p := c.Series[0].Points[i]; *p.X != want.pods || p.Y != want.p50 {
			t.Errorf("point %d at (%v, %v), want the median p50 %v at %v pods", i, *p.X, p.Y, want.p50, want.pods)
		}
	}
}
