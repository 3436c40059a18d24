package neighbours

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

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
		key          result.CellKey
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
	var order []result.CellKey
	by := map[result.CellKey]*acc{}
	for _, r := range run.Results {
		q, ok := r.Metrics.Extra[result.ExtraQuiet]
		if r.Error != "" || !ok {
			continue
		}
		k := r.Key()
		a := by[k]
		if a == nil {
			a = &acc{key: k, fig: workload.FiguresOf(r.Workload)[0]}
			by[k] = a
			order = append(order, k)
		}
		v, _ := r.Metrics.Value(a.fig.Key)
		a.quiet, a.noisy = append(a.quiet, q), append(a.noisy, v)
		if q > 0 && v > 0 {
			if a.kept == nil {
				a.kept = map[int]float64{}
			}
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
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnoisy neighbours: the main figure without and with them (same rounds), the drop and its 95% interval")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "network\tplacement\tworkload\tneighbours\tquiet\twith\tdrop\tkept vs baseline\tcell CPU\tneighbour CPU")
	for _, k := range order {
		a := by[k]
		kept := "-"
		bk := k
		bk.Network = result.BaselineNetwork
		if b := by[bk]; b != nil && k.Network != result.BaselineNetwork {
			kept = keptVsBaseline(a.kept, b.kept)
		}
		cell := "-"
		if len(a.cellQ) > 0 {
			cell = fmt.Sprintf("%.2f->%.2f", section.Median(a.cellQ), section.Median(a.cellN))
		}
		d := "-"
		if a.vs != nil {
			conv := func(r float64) float64 {
				if a.fig.Better == result.LowerBetter {
					return (r - 1) * 100
				}
				return (1 - r) * 100
			}
			d = fmt.Sprintf("%.1f%%", conv(a.vs.Ratio))
			if a.vs.CILevel > 0 {
				lo, hi := conv(a.vs.CILow), conv(a.vs.CIHigh)
				d += fmt.Sprintf(" [%.1f, %.1f]", math.Min(lo, hi), math.Max(lo, hi))
			}
			d = section.VerdictMark(*a.vs) + d
		}
		cpu := "-"
		if len(a.cpu) > 0 {
			cpu = fmt.Sprintf("%.2f CPU", section.Median(a.cpu))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\n", k.Network, k.Placement, k.Workload, k.Step,
			section.Format(a.fig, section.Median(a.quiet)), a.fig.Label, section.Format(a.fig, section.Median(a.noisy)), d, kept, cell, cpu)
	}
	tw.Flush()
	fmt.Fprintln(w, "drop: how much worse with the neighbours (from the geometric mean of the per-round ratios; the median in files written before it); no mark: differs, =: equivalent (within 5 %), ?: undecided")
	fmt.Fprintln(w, "kept vs baseline: the share of its figure the cell kept with the neighbours over the share the baseline kept (same placement, paired by round), its 95% interval; below 1: it suffered more than the baseline")
	fmt.Fprintln(w, "cell CPU: CPUs the measured pair and the network's daemons used without -> with the neighbours (medians); neighbour CPU: the neighbours' cgroups")
}

// keptVsBaseline compares the per-round shares a cell kept with the
// baseline's, paired by round.
func keptVsBaseline(kept, base map[int]float64) string {
	var rounds []int
	for round := range kept {
		if _, ok := base[round]; ok {
			rounds = append(rounds, round)
		}
	}
	sort.Ints(rounds)
	var a, b []float64
	for _, round := range rounds {
		a, b = append(a, kept[round]), append(b, base[round])
	}
	c, ok := stats.Paired(a, b, result.HigherBetter, stats.Default)
	if !ok {
		return "-"
	}
	out := fmt.Sprintf("%.2f", c.Ratio)
	if c.CILevel > 0 {
		out += fmt.Sprintf(" [%.2f, %.2f]", c.CILow, c.CIHigh)
	}
	out = section.VerdictMark(c) + out
	return out
}

// HTML: per workload and neighbour kind, each cell's main
// figure without and with the neighbours (medians over rounds, with
// intervals), and the paired ratio with/without with its interval.
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "interference", Title: "Interference: noisy neighbours",
		Intro: "Each cell measured without and then with the neighbour pods in the same round. The first chart is the workload's main figure both ways (median over rounds, 95 % interval); the second the ratio with/without, paired by round (the geometric mean of the per-round ratios), 1 = no effect; the table under them gives each ratio's verdict: differs, equivalent (within ±5 %) or undecided."}
	overlay := len(ins) > 1
	type grp struct{ wl, step string }
	var groups []grp
	abs := map[grp]*section.Chart{}
	ratio := map[grp]*section.Chart{}
	verdicts := section.Table{Folded: true, Caption: "Each ratio with / without the neighbours, its 95 % interval and its verdict", Head: []string{"run", "workload", "cell", "figure", "ratio [95 %]", "verdict", "rounds that would decide it"}}
	for _, in := range ins {
		type acc struct {
			quiet, noisy []float64
			vs           *result.Comparison
		}
		by := map[result.CellKey]*acc{}
		var order []result.CellKey
		for _, r := range in.Run.Results {
			q, ok := r.Metrics.Extra[result.ExtraQuiet]
			if r.Error != "" || !ok {
				continue
			}
			k := r.Key()
			a := by[k]
			if a == nil {
				a = &acc{}
				by[k] = a
				order = append(order, k)
			}
			f := workload.FiguresOf(r.Workload)[0]
			if v, ok := r.Metrics.Value(f.Key); ok {
				a.quiet, a.noisy = append(a.quiet, f.Display(q)), append(a.noisy, f.Display(v))
			}
			if r.VsQuiet != nil {
				a.vs = r.VsQuiet
			}
		}
		for _, k := range order {
			a := by[k]
			if len(a.noisy) == 0 {
				continue
			}
			f := workload.FiguresOf(k.Workload)[0]
			g := grp{k.Workload, k.Step}
			if abs[g] == nil {
				groups = append(groups, g)
				spec := strings.TrimPrefix(k.Step, "neighbours=")
				abs[g] = &section.Chart{Kind: section.ChartInterval, Title: k.Workload + ": " + section.UnitOf(f) + " without and with neighbours " + spec, YLabel: section.UnitOf(f)}
				ratio[g] = &section.Chart{Kind: section.ChartInterval, Title: k.Workload + ": with neighbours " + spec + " / without", YLabel: "ratio with / without (above 1 is " + f.AboveOne() + ")", Ref: result.F(1), RefLabel: "no effect = 1"}
			}
			cat := section.CellLabel(result.CellKey{Network: k.Network, Placement: k.Placement})
			m, lo, hi, ok := section.MedianCI(a.quiet)
			abs[g].AddIntervalPoint(section.SeriesName(in, overlay, "without neighbours"), cat, m, ok, lo, hi)
			m, lo, hi, ok = section.MedianCI(a.noisy)
			abs[g].AddIntervalPoint(section.SeriesName(in, overlay, "with "+strings.TrimPrefix(k.Step, "neighbours=")), cat, m, ok, lo, hi)
			if v := a.vs; v != nil {
				ratio[g].AddIntervalPoint(section.SeriesName(in, overlay, "with / without"), cat, v.Ratio, v.CILevel > 0, v.CILow, v.CIHigh)
				verdicts.Rows = append(verdicts.Rows, section.VerdictRow(in.Name, k.Workload+" "+k.Step, cat, f.Label, *v))
			}
		}
	}
	for _, g := range groups {
		sec.Charts = append(sec.Charts, *abs[g], *ratio[g])
	}
	if len(verdicts.Rows) > 0 {
		sec.Tables = append(sec.Tables, verdicts)
	}
	return sec
}
