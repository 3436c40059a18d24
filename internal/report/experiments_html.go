package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// The page's sections for the experiments that write their own kind of
// result: noisy neighbours (a result beside neighbours carries the same
// round's figure without them, extra.quiet_value, and its paired ratio,
// vs_quiet), all-to-all (params.pods) and parallel flows (flows). Each
// reads the typed fields and the figures workloads declare, never a
// network's or workload's name.

// medianCI is xs's median and its 95 % interval (none under 2 values).
func medianCI(xs []float64) (m, lo, hi float64, ok bool) {
	m = stats.Median(xs)
	lo, hi, method := stats.Interval(xs, 0.95)
	return m, lo, hi, method != stats.MethodNone
}

// interferenceSection: per workload and neighbour kind, each cell's main
// figure without and with the neighbours (medians over rounds, with
// intervals), and the paired ratio with/without with its interval.
func interferenceSection(ins []Input) section {
	sec := section{ID: "interference", Title: "Interference: noisy neighbours",
		Intro: "Each cell measured without and then with the neighbour pods in the same round. The first chart is the workload's main figure both ways (median over rounds, 95 % interval); the second the ratio with/without, paired by round (the geometric mean of the per-round ratios), 1 = no effect; the table under them gives each ratio's verdict: differs, equivalent (within ±5 %) or undecided."}
	overlay := len(ins) > 1
	type grp struct{ wl, step string }
	var groups []grp
	abs := map[grp]*chart{}
	ratio := map[grp]*chart{}
	verdicts := htmlTable{Folded: true, Caption: "Each ratio with / without the neighbours, its 95 % interval and its verdict", Head: []string{"run", "workload", "cell", "figure", "ratio [95 %]", "verdict", "rounds that would decide it"}}
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
			f := FiguresOf(r.Workload)[0]
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
			f := FiguresOf(k.Workload)[0]
			g := grp{k.Workload, k.Step}
			if abs[g] == nil {
				groups = append(groups, g)
				spec := strings.TrimPrefix(k.Step, "neighbours=")
				abs[g] = &chart{Kind: chartInterval, Title: k.Workload + ": " + unitOf(f) + " without and with neighbours " + spec, YLabel: unitOf(f)}
				ratio[g] = &chart{Kind: chartInterval, Title: k.Workload + ": with neighbours " + spec + " / without", YLabel: "ratio with / without (above 1 is " + f.AboveOne() + ")", Ref: fp(1), RefLabel: "no effect = 1"}
			}
			cat := cellLabel(result.CellKey{Network: k.Network, Placement: k.Placement})
			m, lo, hi, ok := medianCI(a.quiet)
			addIntervalPoint(abs[g], seriesName(in, overlay, "without neighbours"), cat, m, ok, lo, hi)
			m, lo, hi, ok = medianCI(a.noisy)
			addIntervalPoint(abs[g], seriesName(in, overlay, "with "+strings.TrimPrefix(k.Step, "neighbours=")), cat, m, ok, lo, hi)
			if v := a.vs; v != nil {
				addIntervalPoint(ratio[g], seriesName(in, overlay, "with / without"), cat, v.Ratio, v.CILevel > 0, v.CILow, v.CIHigh)
				verdicts.Rows = append(verdicts.Rows, verdictRow(in.Name, k.Workload+" "+k.Step, cat, f.Label, *v))
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

// paramInt reads an integer parameter of a result (0 when absent).
func paramInt(r result.Result, key string) int {
	switch v := r.Params[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case string:
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

// alltoallSection: for results of N pods exchanging all-to-all
// (params.pods), each declared figure against N, a line per network,
// placement and spread (params.spread), medians over rounds.
func alltoallSection(ins []Input) section {
	sec := section{ID: "alltoall", Title: "All-to-all: round time against the number of pods",
		Intro: "N pods exchange messages all-to-all in rounds; each point is the median over the run's rounds. One host (same-host) and two hosts, with one pod on the first and the rest on the second (1:N-1) or half on each (balanced)."}
	overlay := len(ins) > 1
	type key struct{ wl, fig, line string }
	vals := map[key]map[float64][]float64{}
	var wls []string
	lines := map[string][]string{}
	pods := map[string][2]int{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			n := paramInt(r, "pods")
			if r.Error != "" || n < 2 || r.LB != "" {
				continue
			}
			if !slices.Contains(wls, r.Workload) {
				wls = append(wls, r.Workload)
				pods[r.Workload] = [2]int{n, n}
			}
			p := pods[r.Workload]
			pods[r.Workload] = [2]int{min(p[0], n), max(p[1], n)}
			line := r.Network + " " + r.Placement
			if s, ok := r.Params["spread"].(string); ok && s != "" && s != "one-host" {
				line += " " + s
			}
			line = seriesName(in, overlay, line)
			if !slices.Contains(lines[r.Workload], line) {
				lines[r.Workload] = append(lines[r.Workload], line)
			}
			for _, f := range FiguresOf(r.Workload) {
				v, ok := value(f, r.Metrics)
				if !ok || !chartable(f) {
					continue
				}
				k := key{r.Workload, f.Key, line}
				if vals[k] == nil {
					vals[k] = map[float64][]float64{}
				}
				vals[k][float64(n)] = append(vals[k][float64(n)], f.Display(v))
			}
		}
	}
	for _, wl := range wls {
		for _, f := range FiguresOf(wl) {
			if !chartable(f) {
				continue
			}
			c := chart{Kind: chartLines, Title: wl + ": " + unitOf(f) + " against pods", XLabel: "pods (N)", YLabel: unitOf(f),
				XLog: pods[wl][1] >= 8*pods[wl][0], YLog: f.Kind == result.KindLatency}
			for _, line := range lines[wl] {
				m := vals[key{wl, f.Key, line}]
				if len(m) == 0 {
					continue
				}
				var xs []float64
				for x := range m {
					xs = append(xs, x)
				}
				sort.Float64s(xs)
				s := series{Label: line}
				for _, x := range xs {
					s.Points = append(s.Points, point{X: fp(x), Y: stats.Median(m[x])})
				}
				c.Series = append(c.Series, s)
			}
			sec.Charts = append(sec.Charts, c)
		}
	}
	return sec
}

// flowsSection: for results of several flows at once (flows), per
// workload the smallest flow, the fair share (aggregate / flows) and the
// largest flow per cell, and Jain's fairness index with its interval.
func flowsSection(ins []Input) section {
	sec := section{ID: "flows", Title: "Parallel flows: fairness",
		Intro: "Several flows at once between the same pair. The first chart is each cell's smallest flow, the fair share (aggregate / flows) and its largest flow (medians over rounds); the second Jain's fairness index over the flows (1 = equal shares, 1/N = one flow got everything), with its 95 % interval."}
	overlay := len(ins) > 1
	type grp struct{ wl, step string }
	var groups []grp
	share := map[grp]*chart{}
	jain := map[grp]*chart{}
	for _, in := range ins {
		type acc struct {
			n                  int
			lo, fair, hi, jain []float64
		}
		by := map[result.CellKey]*acc{}
		var order []result.CellKey
		for _, r := range in.Run.Results {
			if r.Error != "" || len(r.Flows) < 2 {
				continue
			}
			f := FiguresOf(r.Workload)[0]
			tot, ok := r.Metrics.Value(f.Key)
			if !ok {
				continue
			}
			k := r.Key()
			a := by[k]
			if a == nil {
				a = &acc{n: len(r.Flows)}
				by[k] = a
				order = append(order, k)
			}
			a.fair = append(a.fair, f.Display(tot/float64(len(r.Flows))))
			a.lo = append(a.lo, f.Display(r.Metrics.Extra[result.ExtraFlowMin]))
			a.hi = append(a.hi, f.Display(r.Metrics.Extra[result.ExtraFlowMax]))
			if j, ok := r.Metrics.Extra[result.ExtraJain]; ok {
				a.jain = append(a.jain, j)
			}
		}
		for _, k := range order {
			a := by[k]
			f := FiguresOf(k.Workload)[0]
			g := grp{k.Workload, k.Step}
			if share[g] == nil {
				groups = append(groups, g)
				share[g] = &chart{Kind: chartBars, Title: fmt.Sprintf("%s, %d flows: %s per flow", k.Workload, a.n, unitOf(f)), YLabel: unitOf(f) + " per flow"}
				jain[g] = &chart{Kind: chartInterval, Title: fmt.Sprintf("%s, %d flows: Jain's fairness index", k.Workload, a.n), YLabel: "Jain's index", Ref: fp(1), RefLabel: "equal shares = 1"}
			}
			cat := cellLabel(result.CellKey{Network: k.Network, Placement: k.Placement, LB: k.LB})
			for _, s := range []struct {
				name string
				xs   []float64
			}{{"smallest flow", a.lo}, {"fair share (aggregate / flows)", a.fair}, {"largest flow", a.hi}} {
				addIntervalPoint(share[g], seriesName(in, overlay, s.name), cat, stats.Median(s.xs), false, 0, 0)
			}
			if len(a.jain) > 0 {
				m, lo, hi, ok := medianCI(a.jain)
				addIntervalPoint(jain[g], seriesName(in, overlay, "Jain's index"), cat, m, ok, lo, hi)
			}
		}
	}
	for _, g := range groups {
		sec.Charts = append(sec.Charts, *share[g], *jain[g])
	}
	return sec
}
