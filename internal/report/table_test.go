package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
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
	for _, want := range []string{"10.0k (?0.50x)", "0.50 (?0.25x)", "error: nat cross-host tcp_rr: client: boom", "skipped ipvlan: needs CONFIG_IPVLAN", "every ratio is ? undecided"} {
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
// ratio with its verdict's mark (an older file's comparisons: significant
// is differs, an interval inside the minimum effect equivalent), its
// interval, warnings and the legend with the test the run used; and the
// CPU column only where measured.
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
			P: 0.2, Test: "Wilcoxon signed-rank", Alpha: 0.01, MinEffect: 0.1, Significant: sig, CILevel: 0.9}
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
		"20.0k  ", "11.0k (0.55x [0.52, 0.59])", "20.4k (=1.02x [0.99, 1.06])", "12.5", "warning: noisy machine",
		"medians over 3 rounds", "its 90% interval (Wilcoxon signed-rank)",
		"verdicts (p<0.01, minimum effect 10 %): no mark = differs (the interval clear of [0.90, 1.10]); = equivalent",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Contains(out, "CPU") || strings.Contains(out, "one round:") {
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

// TestTableVerdicts: a table over synthetic paired rounds gives each ratio
// the verdict its interval shows, with the mark and the legend that say
// so, and the JSON the verdict's word: per-round ratios {0.809, 0.820,
// 0.899} (p = 0.035, interval [0.73, 0.97]) are undecided, not "no
// difference"; {1.00, 1.01, 0.99} are equivalent; {0.60, 0.62, 0.61}
// differ; one round is undecided, with no interval.
func TestTableVerdicts(t *testing.T) {
	mk := func(ratios map[string][]float64) *result.Run {
		run := &result.Run{Schema: result.Schema}
		for round := 1; round <= len(ratios["bridge"]); round++ {
			base := 10000 * (1 + 0.1*float64(round%2)) // the machine's drift, shared by the round
			for _, n := range []string{"baseline", "bridge", "host", "nat"} {
				r := rr(n, "cross-host", base)
				if n != "baseline" {
					r = rr(n, "cross-host", base*ratios[n][round-1])
				}
				r.Round = round
				run.Results = append(run.Results, r)
			}
		}
		run.Rounds = len(ratios["bridge"])
		stats.Summarize(run, FiguresOf)
		return run
	}
	run := mk(map[string][]float64{
		"bridge": {0.809, 0.820, 0.899},
		"host":   {1.00, 1.01, 0.99},
		"nat":    {0.60, 0.62, 0.61},
	})
	var b bytes.Buffer
	Table(&b, run)
	out := b.String()
	t.Log("\n" + out)
	verdicts := map[string]string{}
	for _, s := range run.Summaries {
		if s.Figure == result.KeyTransactions && s.VsBaseline != nil {
			verdicts[s.Cell.Network] = s.VsBaseline.Verdict
		}
	}
	for net, want := range map[string]string{"bridge": stats.Undecided, "host": stats.Equivalent, "nat": stats.Differs} {
		if verdicts[net] != want {
			t.Errorf("%s: verdict %q in the JSON, want %q", net, verdicts[net], want)
		}
	}
	for _, want := range []string{
		"(?0.84x [0.73, 0.97])", "(=1.00x [0.98, 1.03])", "(0.61x [0.59, 0.64])",
		"the paired ratio to baseline in the same placement: the geometric",
		"mean of the per-round ratios (cell ÷ baseline of the same round), not the quotient of the two medians shown;",
		"no mark = differs (the interval clear of [0.95, 1.05]); = equivalent",
		"(the whole interval inside [0.95, 1.05]); ? undecided: neither a difference nor an equivalence is shown.",
		"? more rounds would decide (--repeat N); at the spread seen, about: bridge cross-host tcp_rr trans/s 4",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	one := mk(map[string][]float64{"bridge": {0.809}, "host": {1.0}, "nat": {0.6}})
	b.Reset()
	Table(&b, one)
	for _, want := range []string{"(?0.81x)", "(?1.00x)", "(?0.60x)", "with no", "interval and no test, so every ratio is ? undecided"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("one round: table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestFiguresDeclareDirection: every figure a workload or measure
// declares says whether higher or lower is better, which the ratio
// legends and the verdicts' direction read.
func TestFiguresDeclareDirection(t *testing.T) {
	names := append(workload.Names(), workload.MeasureNames()...)
	if len(names) < 15 {
		t.Fatalf("%d workloads registered", len(names))
	}
	for _, n := range names {
		for _, f := range FiguresOf(n) {
			if f.Better != result.HigherBetter && f.Better != result.LowerBetter {
				t.Errorf("%s: figure %s declares %q better; say higher or lower", n, f.Key, f.Better)
			}
		}
	}
}

// TestRatioLegendDirection: the legend under a table says what a ratio
// above 1 means for each of its ratio columns: faster/more for a rate,
// slower/longer for a time (the start-up table's used to say "more
// throughput" under a time).
func TestRatioLegendDirection(t *testing.T) {
	runs := runFiles(t)
	for _, c := range []struct {
		run       string
		want, not []string
	}{
		{"startup", []string{"above 1 is slower/longer (startup ms)"}, []string{"faster/more", "throughput"}},
		{"summaries", []string{"above 1 is faster/more (tcp_rr trans/s, tcp_stream Gbit/s, udp_stream Gbit/s)"}, []string{"slower"}},
		{"startup_suite", []string{"above 1 is slower/longer (startup ms)"}, []string{"more throughput"}},
	} {
		var b bytes.Buffer
		Table(&b, runs[c.run])
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the table does not say %q:\n%s", c.run, w, b.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: the table says %q", c.run, n)
			}
		}
	}
	for _, c := range []struct {
		f    result.Figure
		want string
	}{
		{result.FigTransactions, "faster/more"},
		{result.FigThroughput, "faster/more"},
		{result.FigP99, "slower/longer"},
		{result.Figure{Better: result.LowerBetter, Kind: result.KindTime}, "slower/longer"},
		{result.FigCPUPerByte, "more, worse"},
		{result.Figure{}, "higher"},
	} {
		if got := c.f.AboveOne(); got != c.want {
			t.Errorf("%s %s %s: AboveOne %q, want %q", c.f.Key, c.f.Better, c.f.Kind, got, c.want)
		}
	}
}
