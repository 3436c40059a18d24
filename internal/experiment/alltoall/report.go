package alltoall

import (
	"slices"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// The page's section of the experiment's results (params.pods).
func init() { section.Register(section.Info{Name: "alltoall", HTML: HTML, HTMLRank: 70}) }

// HTML: for results of N pods exchanging all-to-all
// (params.pods), each declared figure against N, a line per network,
// placement and spread (params.spread), medians over rounds.
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "alltoall", Title: "All-to-all: round time against the number of pods",
		Intro: "N pods exchange messages all-to-all in rounds; each point is the median over the run's rounds. One host (same-host) and two hosts, with one pod on the first and the rest on the second (1:N-1) or half on each (balanced)."}
	overlay := len(ins) > 1
	type key struct{ wl, fig, line string }
	vals := map[key]map[float64][]float64{}
	var wls []string
	lines := map[string][]string{}
	pods := map[string][2]int{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			n := int(section.Param(r, "pods"))
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
			line = section.SeriesName(in, overlay, line)
			if !slices.Contains(lines[r.Workload], line) {
				lines[r.Workload] = append(lines[r.Workload], line)
			}
			for _, f := range workload.FiguresOf(r.Workload) {
				v, ok := section.Value(f, r.Metrics)
				if !ok || !section.Chartable(f) {
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
		for _, f := range workload.FiguresOf(wl) {
			if !section.Chartable(f) {
				continue
			}
			c := section.Chart{Kind: section.ChartLines, Title: wl + ": " + section.UnitOf(f) + " against pods", XLabel: "pods (N)", YLabel: section.UnitOf(f),
				XLog: pods[wl][1] >= 8*pods[wl][0], YLog: f.Kind == result.KindLatency}
			for _, line := range lines[wl] {
				if m := vals[key{wl, f.Key, line}]; len(m) > 0 {
					c.Series = append(c.Series, section.Series{Label: line, Points: section.LinePoints(m, stats.Median)})
				}
			}
			sec.Charts = append(sec.Charts, c)
		}
	}
	return sec
}
