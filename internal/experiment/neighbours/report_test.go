package neighbours

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
)

// The interference table tests the study's finding: the share of its
// figure a network kept beside the neighbours against the share the
// baseline kept, paired by round; and it shows the CPU the measured cell
// got without and with them.
func TestNeighboursKeptVsBaseline(t *testing.T) {
	run := &result.Run{}
	add := func(network string, round int, quiet, noisy, cellQ, cellN float64) {
		cpu := func(c float64) *result.CPUCost { return &result.CPUCost{WallS: 2, CellS: result.F(2 * c)} }
		q := result.Metrics{ThroughputBps: result.F(quiet), CPU: cpu(cellQ)}
		n := result.Metrics{ThroughputBps: result.F(noisy), CPU: cpu(cellN), Extra: map[string]float64{result.ExtraQuiet: quiet}}
		run.Results = append(run.Results,
			result.Result{Network: network, Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=none", Round: round, Metrics: q},
			result.Result{Network: network, Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=busy:5", Round: round, Metrics: n})
	}
	// the baseline and host-gw keep about half, weave about a quarter
	for round, speed := range []float64{1, 0.6, 1.5, 1.1} {
		r := round + 1
		add("baseline", r, 1e9*speed, 0.5e9*speed, 1, 0.3)
		add("host-gw", r, 0.9e9*speed, 0.45e9*speed*(1+0.02*float64(r%2)), 1, 0.3)
		add("weave", r, 0.8e9*speed, 0.2e9*speed*(1+0.03*float64(r%2)), 1.2, 0.6)
	}
	var b bytes.Buffer
	Text(&b, run)
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 8 && f[1] == "cross-host" {
			lines[f[0]] = strings.Join(f, " ")
		}
	}
	for net, want := range map[string]string{
		"baseline": "0.53 - - 1.00->0.30", // no drop without Finish's VsQuiet; nothing to compare with
		"host-gw":  "=1.0",                // kept what the baseline kept, within 5 %
		"weave":    "0.5",                 // kept half of what the baseline kept
	} {
		if !strings.Contains(lines[net], want) {
			t.Errorf("%s: no %q in %q\n%s", net, want, lines[net], b.String())
		}
	}
	if strings.Contains(lines["weave"], "=0.5") || strings.Contains(lines["weave"], "?0.5") || !strings.Contains(lines["weave"], "1.20->0.60") {
		t.Errorf("weave: want a significant 0.5 and cell CPU 1.20->0.60: %q", lines["weave"])
	}
}

// TestInterferenceVerdictTable: the HTML interference section gives each
// with/without ratio its verdict, as the comparison section does.
func TestInterferenceVerdictTable(t *testing.T) {
	mk := func(net string, vs result.Comparison) result.Result {
		m := result.Metrics{ThroughputBps: result.F(0.8e9), Extra: map[string]float64{result.ExtraQuiet: 1e9}}
		return result.Result{Network: net, Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=busy:5", Round: 1, Metrics: m, VsQuiet: &vs}
	}
	run := &result.Run{Results: []result.Result{
		mk("weave", result.Comparison{Ratio: 0.8, CILow: 0.7, CIHigh: 0.9, CILevel: 0.95, P: 0.01, Alpha: 0.05, MinEffect: 0.05, Verdict: "differs", Direction: "worse"}),
		mk("vxlan", result.Comparison{Ratio: 1.0, CILow: 0.97, CIHigh: 1.03, CILevel: 0.95, P: 0.9, Alpha: 0.05, MinEffect: 0.05, Verdict: "equivalent"}),
		mk("bridge", result.Comparison{Ratio: 0.84, CILow: 0.73, CIHigh: 0.97, CILevel: 0.95, P: 0.035, Alpha: 0.05, MinEffect: 0.05, Verdict: "undecided", RoundsNeeded: 4}),
	}}
	sec := HTML([]section.Input{{Name: "r", Run: run}})
	if len(sec.Tables) != 1 {
		t.Fatalf("%d tables, want the verdicts'", len(sec.Tables))
	}
	want := map[string][2]string{
		"weave":  {"0.80x [0.70, 0.90]", "differs: worse"},
		"vxlan":  {"=1.00x [0.97, 1.03]", "equivalent (within ±5 %)"},
		"bridge": {"?0.84x [0.73, 0.97]", "undecided: not shown"},
	}
	for _, r := range sec.Tables[0].Rows {
		net := strings.Fields(r[2])[0]
		if w := want[net]; r[4] != w[0] || r[5] != w[1] {
			t.Errorf("%s: %q %q, want %q %q", net, r[4], r[5], w[0], w[1])
		}
		delete(want, net)
	}
	if len(want) > 0 {
		t.Errorf("no rows for %v", want)
	}
}

// A cell beside neighbours: its quiet and noisy figures, the drop with its
// interval and the neighbours' CPU.
func TestTextLine(t *testing.T) {
	noisy := result.Metrics{ThroughputBps: result.F(0.8e9), Extra: map[string]float64{result.ExtraQuiet: 1e9, result.ExtraNeighbourCPU: 1.5}}
	run := &result.Run{Results: []result.Result{{Network: "weave", Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=busy:5",
		Metrics: noisy, VsQuiet: &result.Comparison{Ratio: 0.8, CILow: 0.7, CIHigh: 0.9, CILevel: 0.95, Significant: true}}}}
	var b bytes.Buffer
	Text(&b, run)
	if want := "neighbours=busy:5  1.00 Gbit/s  0.80  20.0% [10.0, 30.0]  -                 -         1.50 CPU"; !strings.Contains(b.String(), want) {
		t.Errorf("no %q in\n%s", want, b.String())
	}
}
