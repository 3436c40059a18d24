package startup

import (
	"slices"
	"sort"

	"github.com/cnperf/cnperf/internal/section"
)

// The page's section of the measurement's phases (metrics.phases_ms).
func init() { section.Register(section.Info{Name: "phases", HTML: HTML, HTMLRank: 40}) }

// knownPhases orders the start-up phases the networks mark (netmode.Phase*);
// others follow in the order they appear.
var knownPhases = []string{"namespace", "links", "control_plane", "first_packet"}

// HTML: the mean time of each start-up phase as stacked bars per
// network (and run).
func HTML(ins []section.Input) section.HTMLSection {
	sec := section.HTMLSection{ID: "startup", Title: "Start-up phases",
		Intro: "Mean time of each phase of bringing a pod onto the network, stacked; the total is the time to the first reply."}
	overlay := len(ins) > 1
	var charts section.Rows[string, section.Chart] // a workload's
	type cell struct{ wl, cat string }
	vals := map[cell]map[string][]float64{}
	var cats = map[string][]string{}
	phases := map[string][]string{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			if r.Error != "" || len(r.Metrics.PhasesMs) == 0 {
				continue
			}
			charts.Get(r.Workload, func() section.Chart {
				return section.Chart{Kind: section.ChartStacked, Title: r.Workload + ": start-up phases", YLabel: "ms"}
			})
			cat := section.SeriesName(in, overlay, section.CellLabel(r.Key()))
			c := cell{r.Workload, cat}
			if vals[c] == nil {
				vals[c] = map[string][]float64{}
				cats[r.Workload] = append(cats[r.Workload], cat)
			}
			for p, v := range r.Metrics.PhasesMs {
				vals[c][p] = append(vals[c][p], v)
				if !slices.Contains(phases[r.Workload], p) {
					phases[r.Workload] = append(phases[r.Workload], p)
				}
			}
		}
	}
	for wl, c := range charts.All() {
		ps := phases[wl]
		// known phases in their order, then the others by name (they come
		// from a map: first-seen order would change from run to run)
		sort.Slice(ps, func(i, j int) bool {
			if ri, rj := phaseRank(ps[i]), phaseRank(ps[j]); ri != rj {
				return ri < rj
			}
			return ps[i] < ps[j]
		})
		c.Labels = cats[wl]
		for _, p := range ps {
			s := section.Series{Label: p}
			for _, cat := range cats[wl] {
				if vs := vals[cell{wl, cat}][p]; len(vs) > 0 {
					s.Points = append(s.Points, section.Point{Cat: cat, Y: section.Mean(vs)})
				}
			}
			c.Series = append(c.Series, s)
		}
		sec.Charts = append(sec.Charts, *c)
	}
	return sec
}

// phaseRank is p's place among the known phases, after them when unknown.
func phaseRank(p string) int {
	if i := slices.Index(knownPhases, p); i >= 0 {
		return i
	}
	return len(knownPhases)
}
