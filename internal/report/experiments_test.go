package report

import (
	"bytes"
	"strconv"
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
		"neighbours=busy:5  1.00 Gbit/s  0.80  20.0% [10.0, 30.0]  -                 -         1.50 CPU",
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
	Sizes(&b, run)
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

// A sweep's reference cells differ only by their step: the noise line
// names it, else it lists "tcp_stream same-host Gbit/s" once per size.
func TestNoiseNamesTheStep(t *testing.T) {
	run := &result.Run{}
	for i, size := range []string{"size=64", "size=65507"} {
		run.Summaries = append(run.Summaries, result.Summary{
			Cell:   result.CellKey{Network: "baseline", Placement: "same-host", Workload: "tcp_stream", Step: size},
			Figure: result.KeyThroughput, N: 3, Median: 1e9, CV: 0.05 * float64(i+1)})
	}
	var b bytes.Buffer
	noise(&b, run)
	for _, want := range []string{"tcp_stream same-host size=64 Gbit/s 5.0%", "tcp_stream same-host size=65507 Gbit/s 10.0%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in %q", want, b.String())
		}
	}
}

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
	Neighbours(&b, run)
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
	sec := interferenceSection([]Input{{Name: "r", Run: run}})
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
