package services

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// The report's section of the experiment's results (a load balancer
// each): its table first under the table, its charts on the page.
func init() {
	section.Register(section.Info{Name: "services", Text: Text, TextRank: 10, HTML: HTML, HTMLRank: 50})
}

// svcMeasure is one column group of the services table: a workload, and
// how its results used connections (short or long, as it declares).
type svcMeasure struct {
	workload string
	conn     workload.Connections
}

func (m svcMeasure) title() string {
	if m.conn.Style != "" {
		return m.conn.Style + " " + m.workload + "/s"
	}
	return m.workload + "/s"
}

// shortName is a workload's name after its protocol: "crr" of "tcp_crr".
func shortName(wl string) string {
	if i := strings.LastIndexByte(wl, '_'); i >= 0 {
		return wl[i+1:]
	}
	return wl
}

type svcRow struct {
	network, placement, lb string
	services               int
}

// Text writes the ClusterIP study's table (seed 003) when the run has
// service results: per network (and placement, when the run has several),
// load balancer and number of services, the time it took to program them,
// the rate of each workload (medians over rounds) with its paired ratio to
// iptables and to ipvs (same network, placement and service count; the
// pod-IP reference against the smallest count), with its interval and its
// verdict's mark as in the main table, and tcp_crr's median transaction
// time for the workloads that declare it dominated by the connect
// (tcp_crr).
func Text(w io.Writer, run *result.Run) {
	var rows []svcRow
	seenRow := map[svcRow]bool{}
	var measures []svcMeasure
	seenM := map[svcMeasure]bool{}
	rate := map[svcRow]map[svcMeasure][]float64{}
	cellOf := map[svcRow]map[svcMeasure]result.CellKey{}
	crrP50 := map[svcRow][]float64{}
	syncS := map[svcRow][]float64{}
	var netOrder, lbOrder, placements []string
	hasIPVS := false
	for _, r := range run.Results {
		if r.LB == "" || r.Error != "" || r.Metrics.TransactionsPerS == nil {
			continue
		}
		k := svcRow{r.Network, r.Placement, r.LB, r.Services}
		if !seenRow[k] {
			seenRow[k] = true
			rows = append(rows, k)
			rate[k] = map[svcMeasure][]float64{}
			cellOf[k] = map[svcMeasure]result.CellKey{}
			if !slices.Contains(placements, r.Placement) {
				placements = append(placements, r.Placement)
			}
			if !slices.Contains(netOrder, r.Network) {
				netOrder = append(netOrder, r.Network)
			}
			if !slices.Contains(lbOrder, r.LB) {
				lbOrder = append(lbOrder, r.LB)
			}
		}
		hasIPVS = hasIPVS || r.LB == result.StudyLBs[1]
		m := svcMeasure{r.Workload, workload.ConnectionsOf(r.Workload, r.Params)}
		if !seenM[m] {
			seenM[m] = true
			measures = append(measures, m)
		}
		rate[k][m] = append(rate[k][m], *r.Metrics.TransactionsPerS)
		if _, ok := cellOf[k][m]; !ok {
			cellOf[k][m] = r.Key()
		}
		if m.conn.ConnectBound {
			if v, ok := r.Metrics.LatencyUs["p50"]; ok {
				crrP50[k] = append(crrP50[k], v)
			}
		}
		if v, ok := r.Metrics.Extra[result.ExtraSyncS]; ok {
			syncS[k] = append(syncS[k], v)
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.network != b.network {
			return slices.Index(netOrder, a.network) < slices.Index(netOrder, b.network)
		}
		if a.placement != b.placement {
			return section.PlacementOrder(a.placement) < section.PlacementOrder(b.placement)
		}
		if a.lb != b.lb {
			return slices.Index(lbOrder, a.lb) < slices.Index(lbOrder, b.lb)
		}
		return a.services < b.services
	})
	refs := result.StudyLBs[:1]
	if hasIPVS {
		refs = result.StudyLBs
	}
	// the reference row of lb at the same network and count (smallest
	// count for the pod-IP row, which has none)
	refRow := func(k svcRow, lb string) (svcRow, bool) {
		if k.services > 0 {
			r := svcRow{k.network, k.placement, lb, k.services}
			return r, seenRow[r]
		}
		best, ok := svcRow{}, false
		for _, r := range rows {
			if r.network == k.network && r.placement == k.placement && r.lb == lb && (!ok || r.services < best.services) {
				best, ok = r, true
			}
		}
		return best, ok
	}
	head := []string{"network", "lb", "services", "sync s"}
	for _, m := range measures {
		head = append(head, m.title())
		for _, ref := range refs {
			head = append(head, "vs "+ref)
		}
		if m.conn.ConnectBound {
			head = append(head, shortName(m.workload)+" p50 us")
		}
	}
	tw := section.TextTable(w, "== ClusterIP services (seed 003): rate through the service, paired ratio vs "+strings.Join(refs, " and vs ")+" ==", strings.Join(head, "\t"))
	for _, k := range rows {
		lb, n := k.lb, fmt.Sprint(k.services)
		if k.lb == result.ReferenceLB {
			lb, n = "none (pod IP)", "-"
		}
		net := k.network
		if len(placements) > 1 {
			net += " " + k.placement
		}
		row := []string{net, lb, n, "-"}
		if v, ok := section.MedianOK(syncS[k]); ok {
			row[3] = fmt.Sprintf("%.3f", v)
		}
		for _, m := range measures {
			v, ok := section.MedianOK(rate[k][m])
			if !ok {
				row = append(row, "-")
			} else {
				row = append(row, section.Count(v))
			}
			for _, ref := range refs {
				cell := "-"
				if rr, found := refRow(k, ref); ok && found && rr != k {
					if ck, ok := cellOf[rr][m]; ok {
						if c, ok := stats.CompareCells(run.Results, cellOf[k][m], ck, result.FigTransactions, stats.Default); ok {
							cell = section.Ratio(c)
						}
					}
				}
				row = append(row, cell)
			}
			if m.conn.ConnectBound {
				if p, ok := section.MedianOK(crrP50[k]); ok {
					row = append(row, fmt.Sprintf("%.1f", p))
				} else {
					row = append(row, "-")
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w, "short = a new connection per request, long = one kept-alive connection; sync s = time to program that many services on every node;")
	fmt.Fprintln(w, "figures are medians over rounds. vs LB: the paired ratio to that load balancer's row (the geometric mean of the per-round")
	fmt.Fprintln(w, "ratios, not the quotient of the two rates shown), its 95% interval, and its verdict's mark: no mark = differs")
	fmt.Fprintln(w, "(p<0.05 and the interval clear of [0.95, 1.05]), = equivalent (the whole interval inside it), ? undecided (neither shown; always so with one round).")
}

// HTML: the rate through a ClusterIP service against the number
// of services, a line per network and load balancer (the pod-IP reference
// flat), one chart per workload and connection style; and the time to
// program them.
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "services", Title: "Service-count scaling per load balancer",
		Intro: "Rate through one ClusterIP service while N services are programmed (mean over repeats); the pod-IP row (lb none) dials a backend directly and is drawn flat as the reference. The ratio charts give each balancer's rate against the pod IP's (the geometric mean of the per-round ratios, with its 95 % interval), and the table under them each one's verdict: differs, equivalent (within ±5 %) or undecided. The last chart is the time it took to program the N services on every node."}
	overlay := len(ins) > 1
	type grp struct{ wl, style string }
	var groups []grp
	charts := map[grp]*section.Chart{}
	var sync *section.Chart
	type sk struct {
		g    grp
		name string
	}
	vals := map[sk]map[float64][]float64{}
	syncVals := map[string]map[float64][]float64{}
	var order []sk
	var syncOrder []string
	maxN := map[string]float64{}
	minN := map[string]float64{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			if r.LB == "" || r.Error != "" {
				continue
			}
			figs := workload.FiguresOf(r.Workload)
			f := figs[0]
			v, ok := section.Value(f, r.Metrics)
			if !ok {
				continue
			}
			conn := workload.ConnectionsOf(r.Workload, r.Params)
			g := grp{r.Workload, conn.Style}
			if charts[g] == nil {
				title := r.Workload
				if conn.Style != "" {
					title = conn.Style + "-connection " + r.Workload
				}
				charts[g] = &section.Chart{Kind: section.ChartLines, Title: title + ": " + section.UnitOf(f) + " against services", XLabel: "services", YLabel: section.UnitOf(f)}
				groups = append(groups, g)
			}
			name := section.SeriesName(in, overlay, r.Network+" lb="+r.LB)
			k := sk{g, name}
			if vals[k] == nil {
				vals[k] = map[float64][]float64{}
				order = append(order, k)
			}
			n := float64(r.Services)
			vals[k][n] = append(vals[k][n], f.Display(v))
			if r.Services > 0 {
				if n > maxN[r.Workload] {
					maxN[r.Workload] = n
				}
				if minN[r.Workload] == 0 || n < minN[r.Workload] {
					minN[r.Workload] = n
				}
			}
			if s, ok := r.Metrics.Extra[result.ExtraSyncS]; ok && r.Services > 0 {
				if syncVals[name] == nil {
					syncVals[name] = map[float64][]float64{}
					syncOrder = append(syncOrder, name)
				}
				syncVals[name][n] = append(syncVals[name][n], s)
			}
		}
	}
	for _, g := range groups {
		c := charts[g]
		c.XLog = maxN[g.wl] >= 10*math.Max(minN[g.wl], 1)
		for _, k := range order {
			if k.g != g {
				continue
			}
			s := section.Series{Label: k.name}
			m := vals[k]
			if v, ok := m[0]; ok && len(m) == 1 { // the pod-IP reference: flat
				y := section.Mean(v)
				s.Dashed = true
				s.Label += " (pod IP, no service)"
				for _, x := range []float64{math.Max(minN[g.wl], 1), math.Max(maxN[g.wl], 1)} {
					s.Points = append(s.Points, section.Point{X: result.F(x), Y: y})
				}
			} else {
				s.Points = section.LinePoints(m, section.Mean)
			}
			c.Series = append(c.Series, s)
		}
		sec.Charts = append(sec.Charts, *c)
	}
	ratios, verdicts := serviceRatios(ins)
	sec.Charts = append(sec.Charts, ratios...)
	if len(verdicts) > 0 {
		sec.Tables = append(sec.Tables, section.Table{Folded: true, Caption: "Each ratio to the pod IP, its 95 % interval and its verdict (the geometric mean of the per-round ratios)",
			Head: []string{"run", "workload", "cell", "figure", "ratio [95 %]", "verdict", "rounds that would decide it"}, Rows: verdicts})
	}
	if len(syncOrder) > 0 {
		sync = &section.Chart{Kind: section.ChartLines, Title: "time to program the services on every node", XLabel: "services", YLabel: "sync (s)"}
		lo, hi := math.Inf(1), 0.0
		for _, name := range syncOrder {
			pts := section.LinePoints(syncVals[name], section.Mean)
			for _, p := range pts {
				lo, hi = math.Min(lo, *p.X), math.Max(hi, *p.X)
			}
			sync.Series = append(sync.Series, section.Series{Label: name, Points: pts})
		}
		sync.XLog = hi >= 10*lo
		sec.Charts = append(sec.Charts, *sync)
	}
	return sec
}

// serviceRatios: per workload (and connection style), each load
// balancer's ratio to the pod-IP row at each number of services, with its
// interval, 1 marked; and each ratio's row of the verdicts' table.
func serviceRatios(ins []section.Input) ([]section.Chart, [][]string) {
	overlay := len(ins) > 1
	var out []*section.Chart
	var verdicts [][]string
	byTitle := map[string]*section.Chart{}
	for _, in := range ins {
		for _, s := range section.Summaries(in.Run) {
			k, v := s.Cell, s.VsBaseline
			if k.LB == "" || k.Services == 0 || v == nil {
				continue
			}
			f, ok := section.FigureOf(k.Workload, s.Figure)
			if !ok || !f.Ratio {
				continue
			}
			title := k.Workload
			if st := section.StepWithout(k.Step, "services="); st != "" {
				title += " (" + st + ")"
			}
			title += ": " + f.Label + " through the service, ratio to the pod IP"
			c := byTitle[title]
			if c == nil {
				one := 1.0
				c = &section.Chart{Kind: section.ChartInterval, Title: title, YLabel: "ratio (above 1 is " + f.AboveOne() + ")", Ref: &one, RefLabel: "pod IP = 1", YLog: true}
				byTitle[title] = c
				out = append(out, c)
			}
			name := section.SeriesName(in, overlay, fmt.Sprintf("%d services", k.Services))
			c.AddIntervalPoint(name, k.Network+" lb="+k.LB, v.Ratio, v.CILevel > 0 || v.CILow != 0 || v.CIHigh != 0, v.CILow, v.CIHigh)
			verdicts = append(verdicts, section.VerdictRow(in.Name, k.Workload, k.Network+" lb="+k.LB+" "+k.Step, f.Label, *v))
		}
	}
	var cs []section.Chart
	for _, c := range out {
		cs = append(cs, *c)
	}
	return cs, verdicts
}
