package sizes

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// The sweep's table: a column per size, medians over rounds; results of
// other experiments are not in it.
func TestText(t *testing.T) {
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
	Text(&b, run)
	out := b.String()
	for _, want := range []string{
		"64    65536", "tcp_stream Gbit/s  vxlan    cross-host  0.10  2.00", // medians over rounds
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// The sweep's table tests the paper's "overlays grow least with message
// size": each row's growth from the smallest size to the largest, and that
// growth against the baseline's, paired by round, with its interval.
func TestSizesGrowthVsBaseline(t *testing.T) {
	gbit := func(v float64) result.Metrics { return result.Metrics{ThroughputBps: result.F(v * 1e9)} }
	run := &result.Run{}
	add := func(network string, round, size int, v float64) {
		run.Results = append(run.Results, result.Result{Network: network, Workload: "tcp_stream", Placement: "cross-host",
			Step: "size=" + strconv.Itoa(size), Round: round, Params: map[string]any{"message_size": size}, Metrics: gbit(v)})
	}
	// the machine's speed varies by round; the baseline grows 100x,
	// host-gw 100x too, vxlan about 50x, every round
	for round, speed := range []float64{1, 0.5, 2, 1.3, 0.8} {
		r := round + 1
		add("baseline", r, 64, 0.04*speed)
		add("baseline", r, 65507, 4*speed)
		add("host-gw", r, 64, 0.03*speed)
		add("host-gw", r, 65507, 3*speed*(1+0.01*float64(round%2)))
		add("vxlan", r, 64, 0.04*speed)
		add("vxlan", r, 65507, 2*speed*(1+0.02*float64(round%3)))
	}
	var b bytes.Buffer
	Text(&b, run)
	out := b.String()
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "tcp_stream" {
			lines[f[2]] = strings.Join(f, " ") // columns one space apart
		}
	}
	if !strings.Contains(out, "growth 64->65507") {
		t.Fatalf("no growth column in\n%s", out)
	}
	for net, want := range map[string][]string{
		"baseline": {"100.0x -"},
		"host-gw":  {"100.0x =1.00 ["},          // grows as the baseline does
		"vxlan":    {"51.0x 0.51 [0.50, 0.52]"}, // half the baseline's growth, differs: no mark
	} {
		for _, w := range want {
			if !strings.Contains(lines[net], w) {
				t.Errorf("%s: no %q in %q\n%s", net, w, lines[net], out)
			}
		}
	}
	if strings.Contains(lines["vxlan"], "=0.5") || strings.Contains(lines["vxlan"], "?0.5") {
		t.Errorf("vxlan's halved growth is not significant: %q", lines["vxlan"])
	}
}
