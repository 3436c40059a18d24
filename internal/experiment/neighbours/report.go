package neighbours

import (
	"fmt"
	"io"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// cellCPU is the CPU a result's cell used (agents, the network's daemons,
// ksoftirqd), in CPUs.
func cellCPU(r result.Result) (float64, bool) {
	if r.Metrics.CPU == nil || r.Metrics.CPU.CellS == nil || r.Metrics.CPU.WallS <= 0 {
		return 0, false
	}
	return *r.Metrics.CPU.CellS / r.Metrics.CPU.WallS, true
}

// The report's section of the experiment's results (steps
// "neighbours=..."): its table under the table, its charts on the page.
func init() {
	section.Register(section.Info{Name: "neighbours", Text: Text, TextRank: 60, HTML: HTML, HTMLRank: 60})
}

// Text writes, for results measured beside noisy neighbours, the
// cell's main figure without and with them (medians over rounds), the
// drop with its 95 % interval from the paired ratio (VsQuiet), the
// share of its figure the cell kept against the share the baseline kept
// (same placement and workload, paired by round: below 1 it suffered more
// than the baseline, the study's finding for user-space overlays), the
// CPU the measured cell (agents, the network's daemons) used without and
// with the neighbours, and the CPU the neighbours used.
func Text(w io.Writer, run *result.Run) {
	type acc struct {
		fig          result.Figure
		quiet, noisy []float64
		cpu          []float64
		vs           *result.Comparison
		kept         map[int]float64 // round -> with / quiet (higher is better)
		cellQ, cellN []float64
	}
	quietCPU := map[result.CellKey]map[int]float64{}
	for _, r := range run.Results {
		if r.Step != StepQuiet || r.Error != "" {
			continue
		}
		if c, ok := cellCPU(r); ok {
			k := r.Key()
			if quietCPU[k] == nil {
				quietCPU[k] = map[int]float64{}
			}
			quietCPU[k][r.Round] = c
		}
	}
	var rows section.Rows[result.CellKey, acc]
	for _, r := range run.Results {
		q, ok := r.Metrics.Extra[result.ExtraQuiet]
		if r.Error != "" || !ok {
			continue
		}
		k := r.Key()
		a := rows.Get(k, func() acc { return acc{fig: workload.FiguresOf(r.Workload)[0], kept: map[int]float64{}} })
		v, _ := r.Metrics.Value(a.fig.Key)
		a.quiet, a.noisy = append(a.quiet, q), append(a.noisy, v)
		if q > 0 && v > 0 {
			if a.fig.Better == result.LowerBetter {
				a.kept[r.Round] = q / v
			} else {
				a.kept[r.Round] = v / q
			}
		}
		qk := k
		qk.Step = StepQuiet
		if cq, ok := quietCPU[qk][r.Round]; ok {
			if cn, ok := cellCPU(r); ok {
				a.cellQ, a.cellN = append(a.cellQ, cq), append(a.cellN, cn)
			}
		}
		if c, ok := r.Metrics.Extra[result.ExtraNeighbourCPU]; ok {
			a.cpu = append(a.cpu, c)
		}
		if r.VsQuiet != nil {
			a.vs = r.VsQuiet
		}
	}
	if len(rows.Keys) == 0 {
		return
	}
	tw := section.TextTable(w, "noisy neighbours: the main figure without and with them (same rounds), the drop and its 95% interval",
		"network\tplacement\tworkload\tneighbours\tquiet\twith\tdrop\tkept vs baseline\tcell CPU\tneighbour CPU")
	for k, a := range rows.All() {
		kept := "-"
		bk := k
		bk.Network = result.BaselineNetwork
		if b := rows.Of(bk); b != nil && k.Network != result.BaselineNetwork {
			// the share kept against the baseline's, paired by round
			kept = section.PairedFactor(a.kept, b.kept, result.HigherBetter)
		}
		cell := "-"
		if len(a.cellQ) > 0 {
			cell = fmt.Sprintf("%.2f->%.2f", stats.Median(a.cellQ), stats.Median(a.cellN))
		}
		d := "-"
		if a.vs != nil {
			d = section.Percent(*a.vs, func(r float64) float64 {
				if a.fig.Better == result.LowerBetter {
					return (r - 1) * 100
				}
				return (1 - r) * 100
			}, "%.1f")
		}
		cpu := "-"
		if len(a.cpu) > 0 {
			cpu = fmt.Sprintf("%.2f CPU", stats.Median(a.cpu))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", k.Network, k.Placement, k.Workload, k.Step,
			section.Format(a.fig, stats.Median(a.quiet)), a.fig.Label, section.Format(a.fig, stats.Median(a.noisy)), d, kept, cell, cpu)
	}
	tw.Flush()
	fmt.Fprintln(w, "drop: how much worse with the neighbours (from the geometric mean of the per-round ratios; the median in files written before it); no mark: differs, =: equivalent (within 5 %), ?: undecided")
	fmt.Fprintln(w, "kept vs baseline: the share of its figure the cell kept with the neighbours over the share the baseline kept (same placement, paired by round), its 95% interval; below 1: it suffered more than the baseline")
	fmt.Fprintln(w, "cell CPU: CPUs the measured pair and the network's daemons used without -> with the neighbours (medians); neighbour CPU: the neighbours' cgroups")
}

// HTML: per workload and neighbour kind, each cell's main
// figure without and with the neighbours (medians over rounds, with
// intervals), and the paired ratio with/without with its interval.
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "interference", Title: "Interference: noisy neighbours",
		Intro: "Each cell measured without and then with the neighbour pods in the same round. The first chart is the workload's main figure both ways (median over rounds, 95 % interval); the second the ratio with/without, paired by round (the geometric mean of the per-round ratios), 1 = no effect; the table under them gives each ratio's verdict: differs, equivalent (within ±5 %) or undecided."}
	overlay := len(ins) > 1
	type grp struct{ wl, step string }
	var groups section.Rows[grp, []section.Chart] // the figure both ways, the ratio
	verdicts := section.Table{Folded: true, Caption: "Each ratio with / without the neighbours, its 95 % interval and its verdict", Head: []string{"run", "workload", "cell", "figure", "ratio [95 %]", "verdict", "rounds that would decide it"}}
	for _, in := range ins {
		type acc struct {
			quiet, noisy []float64
			vs           *result.Comparison
		}
		var cells section.Rows[result.CellKey, acc]
		for _, r := range in.Run.Results {
			q, ok := r.Metrics.Extra[result.ExtraQuiet]
			if r.Error != "" || !ok {
				continue
			}
			a := cells.Get(r.Key(), nil)
			f := workload.FiguresOf(r.Workload)[0]
			if v, ok := r.Metrics.Value(f.Key); ok {
				a.quiet, a.noisy = append(a.quiet, f.Display(q)), append(a.noisy, f.Display(v))
			}
			if r.VsQuiet != nil {
				a.vs = r.VsQuiet
			}
		}
		for k, a := range cells.All() {
			if len(a.noisy) == 0 {
				continue
			}
			f := workload.FiguresOf(k.Workload)[0]
			spec := strings.TrimPrefix(k.Step, "neighbours=")
			cs := *groups.Get(grp{k.Workload, k.Step}, func() []section.Chart {
				return []section.Chart{
					{Kind: section.ChartInterval, Title: k.Workload + ": " + section.UnitOf(f) + " without and with neighbours " + spec, YLabel: section.UnitOf(f)},
					{Kind: section.ChartInterval, Title: k.Workload + ": with neighbours " + spec + " / without", YLabel: "ratio with / without (above 1 is " + f.AboveOne() + ")", Ref: result.F(1), RefLabel: "no effect = 1"},
				}
			})
			cat := section.CellLabel(result.CellKey{Network: k.Network, Placement: k.Placement})
			m, lo, hi, ok := section.MedianCI(a.quiet)
			cs[0].AddIntervalPoint(section.SeriesName(in, overlay, "without neighbours"), cat, m, ok, lo, hi)
			m, lo, hi, ok = section.MedianCI(a.noisy)
			cs[0].AddIntervalPoint(section.SeriesName(in, overlay, "with "+spec), cat, m, ok, lo, hi)
			if v := a.vs; v != nil {
				cs[1].AddIntervalPoint(section.SeriesName(in, overlay, "with / without"), cat, v.Ratio, v.CILevel > 0, v.CILow, v.CIHigh)
				verdicts.Rows = append(verdicts.Rows, section.VerdictRow(in.Name, k.Workload+" "+k.Step, cat, f.Label, *v))
			}
		}
	}
	sec.Charts = section.AllCharts(&groups)
	if len(verdicts.Rows) > 0 {
		sec.Tables = append(sec.Tables, verdicts)
	}
	return sec
}
