package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// headline is a workload's main figure: throughput, else transactions/s.
func headline(m result.Metrics) (float64, string, bool) {
	if m.ThroughputBps != nil {
		return *m.ThroughputBps, "bit/s", true
	}
	if m.TransactionsPerS != nil {
		return *m.TransactionsPerS, "trans/s", true
	}
	return 0, "", false
}

// Ratios prints, per network and placement, workload a's headline figure
// against workload b's, and the same for the p50 latency when both have
// one and for the cell's CPU per transaction (or per byte, for a
// throughput) when both were metered: how two tools measured side by side
// in one run compare. Figures are
// medians over the results; each ratio is the one its interval is about
// (stats.CompareCells: paired by round where the results have rounds, the
// ratio of geometric means otherwise), with its verdict's mark.
func Ratios(w io.Writer, run *result.Run, a, b string) error {
	type side struct {
		cell result.CellKey
		vals []float64
		fig  result.Figure
		p50  bool
	}
	vals := map[rowKey]map[string]*side{}
	var keys []rowKey
	for _, r := range run.Results {
		if r.Error != "" || (r.Workload != a && r.Workload != b) {
			continue
		}
		k := rowKey{r.Network, r.Placement, r.LB, r.Backend}
		if vals[k] == nil {
			vals[k] = map[string]*side{}
			keys = append(keys, k)
		}
		x := vals[k][r.Workload]
		if x == nil {
			x = &side{cell: r.Key()}
			vals[k][r.Workload] = x
		}
		if v, unit, ok := headline(r.Metrics); ok {
			x.vals = append(x.vals, v)
			x.fig = result.FigTransactions
			if unit == "bit/s" {
				x.fig = result.FigThroughput
			}
		}
		if _, ok := r.Metrics.LatencyUs["p50"]; ok {
			x.p50 = true
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "network\tplacement\t%s\t%s\tratio [95%%]\tp50 ratio [95%%]\tcost ratio [95%%]\n", a, b)
	found := false
	for _, k := range keys {
		x, y := vals[k][a], vals[k][b]
		if x == nil || y == nil || len(x.vals) == 0 || len(y.vals) == 0 || x.fig.Key != y.fig.Key {
			continue
		}
		c, ok := stats.CompareCells(run.Results, x.cell, y.cell, x.fig, stats.Default)
		if !ok {
			continue
		}
		found = true
		p50 := "-"
		if x.p50 && y.p50 {
			if c, ok := stats.CompareCells(run.Results, x.cell, y.cell, result.FigP50, stats.Default); ok {
				p50 = ratio(c)
			}
		}
		cost, cf := "-", result.FigCPUPerTrans
		if x.fig.Key == result.FigThroughput.Key {
			cf = result.FigCPUPerByte
		}
		if c, ok := stats.CompareCells(run.Results, x.cell, y.cell, cf, stats.Default); ok {
			cost = ratio(c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%s\t%s\t%s\n", k.network, k.placement, stats.Median(x.vals), stats.Median(y.vals), ratio(c), p50, cost)
	}
	tw.Flush()
	if !found {
		return fmt.Errorf("no network has results for both %s and %s", a, b)
	}
	fmt.Fprintf(w, "figures are medians; ratio: %s ÷ %s, the geometric mean of the per-round ratios where the results have rounds (else\n", a, b)
	fmt.Fprintln(w, "the ratio of the geometric means), not the quotient of the medians shown, with its 95% interval; no mark = differs")
	fmt.Fprintln(w, "(p<0.05 and the interval clear of [0.95, 1.05]), = equivalent (the whole interval inside it), ? undecided (neither shown).")
	fmt.Fprintln(w, "cost: the cell's CPU (agents, the tools they run, the network's daemons) per transaction, or per byte for a throughput; lower is better.")
	return nil
}
