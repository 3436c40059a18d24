package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func rr(net, pl string, tps float64) result.Result {
	return result.Result{Network: net, Workload: "tcp_rr", Placement: pl, Metrics: result.Metrics{
		TransactionsPerS: result.F(tps), LatencyUs: map[string]float64{"p50": 10, "p99": 20, "max": 30},
	}}
}

func stream(net, pl string, bps float64) result.Result {
	return result.Result{Network: net, Workload: "tcp_stream", Placement: pl, Metrics: result.Metrics{ThroughputBps: result.F(bps)}}
}

func TestTableRatiosAndOrder(t *testing.T) {
	run := &result.Run{Results: []result.Result{
		rr("baseline", "cross-host", 20000), stream("baseline", "cross-host", 2e9),
		rr("vxlan", "cross-host", 10000), stream("vxlan", "cross-host", 0.5e9),
		rr("baseline", "same-host", 40000),
		{Network: "nat", Workload: "tcp_rr", Placement: "cross-host", Error: "client: boom"},
	}, Skipped: []result.Skip{{Network: "ipvlan", Reason: "needs CONFIG_IPVLAN"}}}
	var b bytes.Buffer
	Table(&b, run)
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[1], "baseline  same-host") {
		t.Errorf("same-host rows must come first:\n%s", out)
	}
	for _, want := range []string{"10.0k (0.50x)", "0.50 (0.25x)", "error: nat cross-host tcp_rr: client: boom", "skipped ipvlan: needs CONFIG_IPVLAN"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRepeatsShowSpread(t *testing.T) {
	run := &result.Run{Results: []result.Result{rr("host", "cross-host", 900), rr("host", "cross-host", 1100)}}
	var b bytes.Buffer
	Table(&b, run)
	if !strings.Contains(b.String(), "1000±14%") {
		t.Errorf("want mean±sd of repeats:\n%s", b.String())
	}
}

func TestStepsGetTheirOwnTable(t *testing.T) {
	a, c := rr("host", "cross-host", 1), rr("host", "cross-host", 2)
	a.Step, c.Step = "rate=100", "rate=200"
	var b bytes.Buffer
	Table(&b, &result.Run{Results: []result.Result{a, c}})
	if !strings.Contains(b.String(), "== rate=100 ==") || !strings.Contains(b.String(), "== rate=200 ==") {
		t.Errorf("want one table per step:\n%s", b.String())
	}
}

func TestAbsentMetricsAreAbsent(t *testing.T) {
	b, err := json.Marshal(stream("host", "cross-host", 1e9).Metrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"loss_ratio", "transactions_per_s", "latency_us"} {
		if strings.Contains(string(b), k) {
			t.Errorf("tcp_stream metrics carry %s: %s", k, b)
		}
	}
}

func TestFiguresOfUnknownWorkload(t *testing.T) {
	if fs := FiguresOf("tcp_gone"); len(fs) != 1 || fs[0].Key != result.KeyTransactions {
		t.Errorf("an unknown workload shows %v, want its transactions/s", fs)
	}
	var b bytes.Buffer
	Table(&b, &result.Run{Results: []result.Result{{Network: "host", Workload: "tcp_gone", Placement: "cross-host",
		Metrics: result.Metrics{TransactionsPerS: result.F(5)}}}})
	if !strings.Contains(b.String(), "tcp_gone trans/s") || !strings.Contains(b.String(), "  5") {
		t.Errorf("unknown workload's table:\n%s", b.String())
	}
}

// TestSummariesTable checks the table of an interleaved run: medians, the
// ratio marked ≈ unless significant, its interval, warnings and the legend
// with the test the run used; and the CPU column only where measured.
func TestSummariesTable(t *testing.T) {
	cell := func(net string) result.CellKey {
		return result.CellKey{Network: net, Workload: "tcp_rr", Placement: "cross-host"}
	}
	var rs []result.Result
	for round := 1; round <= 3; round++ {
		for _, n := range []string{"baseline", "vxlan", "host"} {
			r := rr(n, "cross-host", 1000*float64(round))
			r.Round = round
			rs = append(rs, r)
		}
	}
	cmp := func(ratio float64, sig bool) *result.Comparison {
		return &result.Comparison{Against: cell("baseline"), Ratio: ratio, CILow: ratio - 0.03, CIHigh: ratio + 0.04,
			P: 0.2, Test: "Wilcoxon signed-rank", Alpha: 0.01, MinEffect: 0.1, Significant: sig}
	}
	run := &result.Run{Rounds: 3, Results: rs, Warnings: []string{"noisy machine"}, Summaries: []result.Summary{
		{Cell: cell("baseline"), Figure: result.KeyTransactions, N: 3, Median: 20000, CILevel: 0.9},
		{Cell: cell("vxlan"), Figure: result.KeyTransactions, N: 3, Median: 11000, CILevel: 0.9, VsBaseline: cmp(0.55, true)},
		{Cell: cell("host"), Figure: result.KeyTransactions, N: 3, Median: 20400, CILevel: 0.9, VsBaseline: cmp(1.02, false)},
		{Cell: cell("host"), Figure: "latency_us.p50", N: 3, Median: 12.5},
	}}
	var b bytes.Buffer
	Table(&b, run)
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"20.0k  ", "11.0k (0.55x [0.52, 0.59])", "20.4k (≈1.02x [0.99, 1.06])", "12.5", "warning: noisy machine",
		"medians over 3 rounds", "its 90% interval",
		"≈: no significant difference (Wilcoxon signed-rank over 3 rounds, p<0.01 and ≥10 % effect)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Contains(out, "CPU") || strings.Contains(out, "(x) is the ratio to baseline in the same placement: above") {
		t.Error("a CPU column without CPU figures, or the one-round legend")
	}
	// the machine's figure alone (a run file from before the cell's) is a
	// different quantity: no column
	rs[0].Metrics.CPU = &result.CPUCost{UsPerTrans: result.F(9.5)}
	b.Reset()
	Table(&b, run)
	if strings.Contains(b.String(), "CPU") {
		t.Errorf("the machine's CPU shown as the cell's:\n%s", b.String())
	}
	rs[0].Metrics.CPU = &result.CPUCost{UsPerTrans: result.F(9.5), CellUsPerTrans: result.F(7.25)}
	b.Reset()
	Table(&b, run)
	if !strings.Contains(b.String(), "CPU us/trans") || !strings.Contains(b.String(), "7.25") || strings.Contains(b.String(), "9.5") {
		t.Errorf("no CPU column of the cell's figure where the run measured it:\n%s", b.String())
	}
}

func TestIncompleteLine(t *testing.T) {
	cases := []struct {
		run  result.Run
		want string
	}{
		{result.Run{Incomplete: true, CellsPlanned: 12, CellsDone: 5}, "incomplete run: 5 of 12 cells finished"},
		// a file from before the counts: what it holds
		{result.Run{Incomplete: true, Results: make([]result.Result, 3)}, "incomplete run: 3 results recorded"},
	}
	for _, c := range cases {
		var b strings.Builder
		Table(&b, &c.run)
		if got := b.String(); !strings.HasPrefix(got, c.want) || strings.Count(got, "\n"+"incomplete") > 0 {
			t.Errorf("table starts %q, want %q once", got, c.want)
		}
	}
	var b strings.Builder
	Table(&b, &result.Run{CellsPlanned: 4, CellsDone: 4})
	if strings.Contains(b.String(), "incomplete") {
		t.Errorf("a complete run called incomplete: %q", b.String())
	}
}
