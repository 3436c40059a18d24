package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestExperimentSections(t *testing.T) {
	gbit := func(v float64) result.Metrics { return result.Metrics{ThroughputBps: result.F(v * 1e9)} }
	run := &result.Run{}
	for round := 1; round <= 3; round++ {
		run.Results = append(run.Results,
			result.Result{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host", Step: "size=64", Round: round, Params: map[string]any{"message_size": 64}, Metrics: gbit(0.1)},
			result.Result{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host", Step: "size=65536", Round: round, Params: map[string]any{"message_size": float64(65536)}, Metrics: gbit(float64(round))},
		)
	}
	par := gbit(3)
	par.Extra = map[string]float64{result.ExtraFlows: 3, result.ExtraJain: 0.9, result.ExtraFlowMin: 0.5e9, result.ExtraFlowMax: 1.5e9}
	run.Results = append(run.Results, result.Result{Network: "host-gw", Workload: "tcp_stream", Placement: "cross-host", Step: "flows=3",
		Metrics: par, Flows: []result.Metrics{gbit(0.5), gbit(1), gbit(1.5)}})
	noisy := gbit(0.8)
	noisy.Extra = map[string]float64{result.ExtraQuiet: 1e9, result.ExtraNeighbourCPU: 1.5}
	run.Results = append(run.Results, result.Result{Network: "weave", Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=busy:5",
		Metrics: noisy, VsQuiet: &result.Comparison{Ratio: 0.8, CILow: 0.7, CIHigh: 0.9, CILevel: 0.95, Significant: true}})
	var b bytes.Buffer
	Sizes(&b, run)
	Flows(&b, run)
	Neighbours(&b, run)
	out := b.String()
	for _, want := range []string{
		"64    65536", "tcp_stream Gbit/s  vxlan    cross-host  0.10  2.00", // medians over rounds
		"host-gw  cross-host  tcp_stream  3      3.00 Gbit/s  0.50      1.50      0.900",
		"neighbours=busy:5  1.00 Gbit/s  0.80  20.0% [10.0, 30.0]  1.50 CPU",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
