package parallel

import (
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// The report's section of results of several flows at once (Result.Flows):
// those of this experiment and of a size sweep's flows.
func init() {
	section.Register(section.Info{Name: "flows", Text: Text, TextRank: 50, HTML: HTML, HTMLRank: 80})
}

// Text writes, for results of several flows at once (--parallel), the
// share each flow got: per cell the aggregate of the workload's main
// figure, the smallest and largest flow's, and Jain's fairness index (1:
// every flow the same; 1/n: one flow got everything), medians over rounds.
func Text(w io.Writer, run *result.Run) {
	type acc struct {
		flows               int
		fig                 result.Figure
		total, lo, hi, jain []float64
	}
	var rows section.Rows[result.CellKey, acc]
	for _, r := range run.Results {
		if r.Error != "" || len(r.Flows) < 2 {
			continue
		}
		a := rows.Get(r.Key(), func() acc { return acc{flows: len(r.Flows), fig: workload.FiguresOf(r.Workload)[0]} })
		tot, ok := r.Metrics.Value(a.fig.Key)
		if !ok {
			continue
		}
		a.total = append(a.total, tot)
		a.lo = append(a.lo, r.Metrics.Extra[result.ExtraFlowMin])
		a.hi = append(a.hi, r.Metrics.Extra[result.ExtraFlowMax])
		a.jain = append(a.jain, r.Metrics.Extra[result.ExtraJain])
	}
	if len(rows.Keys) == 0 {
		return
	}
	tw := section.TextTable(w, "parallel flows: the aggregate, the smallest and largest flow, Jain's fairness (1 = equal shares)",
		"network\tplacement\tworkload\tflows\ttotal\tmin flow\tmax flow\tJain")
	for k, a := range rows.All() {
		if len(a.total) == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s %s\t%s\t%s\t%.3f\n", k.Network, k.Placement, k.Workload, a.flows,
			section.Format(a.fig, stats.Median(a.total)), a.fig.Label, section.Format(a.fig, stats.Median(a.lo)),
			section.Format(a.fig, stats.Median(a.hi)), stats.Median(a.jain))
	}
	tw.Flush()
}

// HTML: for results of several flows at once (flows), per workload the
// smallest flow, the fair share (aggregate / flows) and the largest flow
// per cell, and Jain's fairness index with its interval.
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "flows", Title: "Parallel flows: fairness",
		Intro: "Several flows at once between the same pair. The first chart is each cell's smallest flow, the fair share (aggregate / flows) and its largest flow (medians over rounds); the second Jain's fairness index over the flows (1 = equal shares, 1/N = one flow got everything), with its 95 % interval."}
	overlay := len(ins) > 1
	type grp struct{ wl, step string }
	var groups section.Rows[grp, []section.Chart] // the shares, Jain's index
	for _, in := range ins {
		type acc struct {
			n                  int
			lo, fair, hi, jain []float64
		}
		var cells section.Rows[result.CellKey, acc]
		for _, r := range in.Run.Results {
			if r.Error != "" || len(r.Flows) < 2 {
				continue
			}
			f := workload.FiguresOf(r.Workload)[0]
			tot, ok := r.Metrics.Value(f.Key)
			if !ok {
				continue
			}
			a := cells.Get(r.Key(), func() acc { return acc{n: len(r.Flows)} })
			a.fair = append(a.fair, f.Display(tot/float64(len(r.Flows))))
			a.lo = append(a.lo, f.Display(r.Metrics.Extra[result.ExtraFlowMin]))
			a.hi = append(a.hi, f.Display(r.Metrics.Extra[result.ExtraFlowMax]))
			if j, ok := r.Metrics.Extra[result.ExtraJain]; ok {
				a.jain = append(a.jain, j)
			}
		}
		for k, a := range cells.All() {
			f := workload.FiguresOf(k.Workload)[0]
			cs := *groups.Get(grp{k.Workload, k.Step}, func() []section.Chart {
				return []section.Chart{
					{Kind: section.ChartBars, Title: fmt.Sprintf("%s, %d flows: %s per flow", k.Workload, a.n, section.UnitOf(f)), YLabel: section.UnitOf(f) + " per flow"},
					{Kind: section.ChartInterval, Title: fmt.Sprintf("%s, %d flows: Jain's fairness index", k.Workload, a.n), YLabel: "Jain's index", Ref: result.F(1), RefLabel: "equal shares = 1"},
				}
			})
			cat := section.CellLabel(result.CellKey{Network: k.Network, Placement: k.Placement, LB: k.LB})
			for _, s := range []struct {
				name string
				xs   []float64
			}{{"smallest flow", a.lo}, {"fair share (aggregate / flows)", a.fair}, {"largest flow", a.hi}} {
				cs[0].AddIntervalPoint(section.SeriesName(in, overlay, s.name), cat, stats.Median(s.xs), false, 0, 0)
			}
			if len(a.jain) > 0 {
				m, lo, hi, ok := section.MedianCI(a.jain)
				cs[1].AddIntervalPoint(section.SeriesName(in, overlay, "Jain's index"), cat, m, ok, lo, hi)
			}
		}
	}
	sec.Charts = section.AllCharts(&groups)
	return sec
}
