package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// The page's types and helpers are the section kit's (package section),
// under the names report's sections have always used.
type (
	// Input is one run file given to the HTML report or the CSV export:
	// Name tells overlaid runs apart (the file's base name).
	Input     = kit.Input
	chart     = kit.Chart
	series    = kit.Series
	point     = kit.Point
	section   = kit.HTMLSection
	htmlTable = kit.Table
)

const (
	chartInterval = kit.ChartInterval
	chartLines    = kit.ChartLines
	chartStacked  = kit.ChartStacked
	chartBars     = kit.ChartBars
)

var (
	seriesName = kit.SeriesName
	cellLabel  = kit.CellLabel
	unitOf     = kit.UnitOf
)

func addIntervalPoint(c *chart, name, cat string, y float64, hasCI bool, lo, hi float64) {
	c.AddIntervalPoint(name, cat, y, hasCI, lo, hi)
}

// NewInput names a run by its file's base name without ".json", and
// refreshes the summaries of a file an older cnperf wrote (Refresh).
func NewInput(path string, run *result.Run) Input {
	Refresh(run)
	return Input{Name: strings.TrimSuffix(filepath.Base(path), ".json"), Run: run}
}

// chartable says a figure is a number worth a bar (the kit's Chartable).
var chartable = kit.Chartable

// comparisonSection: per workload (and step), for every declared figure,
// each cell's median with its interval; for the figures that declare a
// ratio, each network's ratio to the baseline with its interval, 1 marked.
func comparisonSection(ins []Input) section {
	sec := section{ID: "comparison", Title: "Comparison with the baseline"}
	howToRead := []string{"The thick line is a cell's median over its rounds; the shaded bar around it is its 95 % confidence interval (none when the run had one round); overlaid runs stand side by side. Ratio charts mark the baseline, the same workload with no container network in the same placement, at 1; a ratio is the geometric mean of the per-round ratios (each round's cell over that round's baseline), not the quotient of the two medians, and the table under the charts gives each one's verdict: differs (p < 0.05 and the whole interval beyond 1 ± 5 %), equivalent (the whole interval within 1 ± 5 %) or undecided (neither shown)."}
	// the answer first: the ratio charts, the summary of their verdicts
	// and the verdicts' table; the figures themselves below, under their
	// own heading
	// the verdicts as the table prints them: corrected for the family
	var families []string
	ins = slices.Clone(ins)
	for i := range ins {
		run, fam, demoted := Corrected(ins[i].Run)
		ins[i].Run = run
		if l := familyLine(fam, demoted); l != "" {
			if len(ins) > 1 {
				l = ins[i].Name + ": " + l
			}
			families = append(families, l)
		}
	}
	sec.Answer = Answer(ins)
	figures := section{ID: "figures", Title: "The figures themselves"}
	verdicts := htmlTable{Caption: "Each ratio to the baseline, its 95 % interval and its verdict", Head: []string{"run", "workload", "cell", "figure", "ratio [95 %]", "verdict", "rounds that would decide it"}}
	overlay := len(ins) > 1
	type group struct{ workload, step string }
	var groups []group
	ratio := map[group]map[string]*chart{}
	abs := map[group]map[string]*chart{}
	figs := map[group][]result.Figure{}
	labels := map[*chart][]string{}
	add := func(m map[group]map[string]*chart, g group, f result.Figure, mk func() *chart) *chart {
		if m[g] == nil {
			m[g] = map[string]*chart{}
		}
		if m[g][f.Key] == nil {
			m[g][f.Key] = mk()
		}
		return m[g][f.Key]
	}
	for _, in := range ins {
		sums := kit.Summaries(in.Run)
		idx := indexSummaries(sums)
		for _, s := range sums {
			k := s.Cell
			if k.LB != "" || searchStep(k.Step) || s.N == 0 {
				continue
			}
			g := group{k.Workload, k.Step}
			f, ok := kit.FigureOf(k.Workload, s.Figure)
			if !ok || !chartable(f) {
				continue
			}
			if _, seen := figs[g]; !seen {
				groups = append(groups, g)
			}
			if f.Ratio && !slices.ContainsFunc(figs[g], func(x result.Figure) bool { return x.Key == f.Key }) {
				figs[g] = append(figs[g], f)
			}
			title := k.Workload
			if k.Step != "" {
				title += " (" + k.Step + ")"
			}
			// figures of one kind and unit share a chart, a series each
			// (p50 and p99 side by side)
			ak := result.Figure{Key: string(f.Kind) + "/" + f.Unit, Label: f.Label, Unit: f.Unit}
			c := add(abs, g, ak, func() *chart {
				// latencies span decades (p50 beside p99): log axis
				return &chart{Kind: chartInterval, Title: title + ": " + unitOf(f), YLabel: unitOf(f), YLog: f.Kind == result.KindLatency}
			})
			if !slices.Contains(labels[c], f.Label) {
				labels[c] = append(labels[c], f.Label)
				c.Title = title + ": " + strings.Join(labels[c], ", ")
				if f.Unit != "" && !strings.Contains(f.Label, f.Unit) {
					c.Title += " (" + f.Unit + ")"
				}
				c.YLabel = f.Unit
			}
			if !slices.ContainsFunc(figs[g], func(x result.Figure) bool { return x.Key == ak.Key }) {
				figs[g] = append(figs[g], ak)
			}
			addIntervalPoint(c, seriesName(in, overlay, f.Label), cellLabel(k), f.Display(s.Median), s.CILevel > 0, f.Display(s.CILow), f.Display(s.CIHigh))
			if f.Ratio && s.VsBaseline != nil {
				v := s.VsBaseline
				c := add(ratio, g, f, func() *chart {
					one := 1.0
					return &chart{Kind: chartInterval, Title: title + ": " + f.Label + " ratio to baseline", YLabel: "ratio (above 1 is " + f.AboveOne() + ")", Ref: &one, RefLabel: "baseline = 1", YLog: true}
				})
				name := seriesName(in, overlay, "ratio")
				addIntervalPoint(c, name, cellLabel(k), v.Ratio, v.CILevel > 0 || v.CILow != 0 || v.CIHigh != 0, v.CILow, v.CIHigh)
				row := verdictRow(in.Name, title, cellLabel(k), f.Label, *v)
				row[4] = tableRatio(s, idx) // with the table's ‡ for rounds left out
				verdicts.Rows = append(verdicts.Rows, row)
			}
		}
	}
	if len(verdicts.Rows) > 0 {
		sec.Tables = append(sec.Tables, verdicts)
	}
	for _, g := range groups {
		for _, f := range figs[g] {
			if c := ratio[g][f.Key]; c != nil {
				sec.Charts = append(sec.Charts, *c)
			}
		}
		for _, f := range figs[g] {
			if c := abs[g][f.Key]; c != nil {
				figures.Charts = append(figures.Charts, *c)
			}
		}
	}
	if len(sec.Charts) == 0 { // no ratios (no baseline): the figures lead
		sec.Charts, figures.Charts = figures.Charts, nil
	}
	sec.Subs = append(sec.Subs, figures)
	if len(sec.Charts) > 0 {
		sec.Notes = append(howToRead, families...)
	}
	return sec
}

// verdictRow is one ratio's line in the comparison's table of verdicts
// (the kit's VerdictRow).
var verdictRow = kit.VerdictRow

// sizeSection: for workloads measured at two message sizes or more (in
// one run or across the overlaid runs), each rate and cost figure the
// workload declares against the message size, a line per network.
func sizeSection(ins []Input) section {
	sec := section{ID: "sizes", Title: "Throughput and CPU cost against message size",
		Intro: "Mean over the rounds of each size, from a size sweep (--message-size 64,256,...: --suite sizes) or from overlaid run files with different --message-size, joined into one curve per network and placement."}
	type key struct {
		workload, fig, cell string
	}
	vals := map[key]map[float64][]float64{}
	sizes := map[string]map[float64]bool{}
	var workloads []string
	cells := map[string][]string{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			// a size sweep's steps ("size=N") are points of the curve;
			// other steps (load rates, flows, neighbours) are not
			if r.Error != "" || r.LB != "" || r.Step != "" && (sizeOf(r.Step) == 0 || strings.Contains(r.Step, " ")) {
				continue
			}
			sz := kit.Param(r, "message_size")
			if sz <= 0 {
				continue
			}
			if sizes[r.Workload] == nil {
				sizes[r.Workload] = map[float64]bool{}
				workloads = append(workloads, r.Workload)
			}
			sizes[r.Workload][sz] = true
			cell := r.Network + " " + r.Placement
			if !slices.Contains(cells[r.Workload], cell) {
				cells[r.Workload] = append(cells[r.Workload], cell)
			}
			for _, f := range FiguresOf(r.Workload) {
				if f.Kind != result.KindRate && f.Kind != result.KindCost {
					continue
				}
				v, ok := value(f, r.Metrics)
				if !ok {
					continue
				}
				k := key{r.Workload, f.Key, cell}
				if vals[k] == nil {
					vals[k] = map[float64][]float64{}
				}
				vals[k][sz] = append(vals[k][sz], f.Display(v))
			}
		}
	}
	for _, wl := range workloads {
		if len(sizes[wl]) < 2 {
			continue
		}
		for _, f := range FiguresOf(wl) {
			if f.Kind != result.KindRate && f.Kind != result.KindCost {
				continue
			}
			c := chart{Kind: chartLines, Title: wl + ": " + unitOf(f) + " against message size", XLabel: "message size (bytes)", YLabel: unitOf(f), XLog: true}
			for _, cell := range cells[wl] {
				if pts := kit.LinePoints(vals[key{wl, f.Key, cell}], kit.Mean); len(pts) > 0 {
					c.Series = append(c.Series, series{Label: cell, Points: pts})
				}
			}
			if !c.Empty() {
				sec.Charts = append(sec.Charts, c)
			}
		}
	}
	return sec
}

func fp(v float64) *float64 { return &v }

// percentileOrder sorts latency keys "p50", "p99.9" by their quantile;
// "mean" and "max" are not part of the spectrum.
func percentileQ(k string) (float64, bool) {
	s, ok := strings.CutPrefix(k, "p")
	if !ok {
		return 0, false
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil && q > 0 && q < 100
}

// spectrumSection: for every workload and step whose results hold a
// latency distribution (three percentiles or more), the percentiles on a
// log axis, a line per network; a step that did not hold its rate is
// dashed and named saturated: its latency is not valid.
func spectrumSection(ins []Input) section {
	sec := section{ID: "latency", Title: "Latency percentile spectrum",
		Intro: "Latency at each percentile (log axis), median over the repeats of each cell. Dashed lines are steps that did not hold their rate (saturated): their latency is not a valid measurement. Percentiles backed by too few samples are listed under the chart."}
	overlay := len(ins) > 1
	type group struct{ workload, step string }
	var groups []group
	charts := map[group]*chart{}
	thin := map[group][]string{}
	for _, in := range ins {
		type cellAcc struct {
			vals map[string][]float64
			sat  bool
		}
		acc := map[result.CellKey]*cellAcc{}
		var order []result.CellKey
		for _, r := range in.Run.Results {
			if r.Error != "" || searchStep(r.Step) || r.LB != "" {
				continue
			}
			n := 0
			for k := range r.Metrics.LatencyUs {
				if _, ok := percentileQ(k); ok {
					n++
				}
			}
			if n < 3 {
				continue
			}
			k := r.Key()
			a := acc[k]
			if a == nil {
				a = &cellAcc{vals: map[string][]float64{}}
				acc[k] = a
				order = append(order, k)
			}
			for q, v := range r.Metrics.LatencyUs {
				if _, ok := percentileQ(q); ok {
					a.vals[q] = append(a.vals[q], v)
					if r.Metrics.Extra[result.ExtraInsignificant(q)] == 1 {
						g := group{r.Workload, r.Step}
						note := seriesName(in, overlay, cellLabel(k)) + " " + q
						if !slices.Contains(thin[g], note) {
							thin[g] = append(thin[g], note)
						}
					}
				}
			}
			if v, _ := saturation(r.Metrics); v != satNo {
				a.sat = true
			}
		}
		for _, k := range order {
			g := group{k.Workload, k.Step}
			c := charts[g]
			if c == nil {
				title := k.Workload
				if k.Step != "" {
					title += " (" + k.Step + ")"
				}
				c = &chart{Kind: chartLines, Title: title + ": latency percentiles", XLabel: "percentile", YLabel: "latency (µs)", YLog: true}
				charts[g] = c
				groups = append(groups, g)
			}
			a := acc[k]
			name := cellLabel(k)
			if a.sat {
				name += " (saturated: not valid)"
			}
			s := series{Label: seriesName(in, overlay, name), Dashed: a.sat}
			for q, vs := range a.vals {
				s.Points = append(s.Points, point{Cat: q, Y: stats.Median(vs)})
				if !slices.Contains(c.Labels, q) {
					c.Labels = append(c.Labels, q)
				}
			}
			sort.Slice(s.Points, func(i, j int) bool {
				a, _ := percentileQ(s.Points[i].Cat)
				b, _ := percentileQ(s.Points[j].Cat)
				return a < b
			})
			c.Series = append(c.Series, s)
		}
	}
	for _, g := range groups {
		c := charts[g]
		sort.Slice(c.Labels, func(i, j int) bool {
			a, _ := percentileQ(c.Labels[i])
			b, _ := percentileQ(c.Labels[j])
			return a < b
		})
		if n := thin[g]; len(n) > 0 {
			// noted while ranging over a map: ordered by cell, then percentile
			sort.SliceStable(n, func(i, j int) bool {
				si, sj := strings.LastIndexByte(n[i], ' '), strings.LastIndexByte(n[j], ' ')
				if n[i][:si] != n[j][:sj] {
					return n[i][:si] < n[j][:sj]
				}
				a, _ := percentileQ(n[i][si+1:])
				b, _ := percentileQ(n[j][sj+1:])
				return a < b
			})
			c.Note = "too few samples for: " + strings.Join(n, ", ")
		}
		sec.Charts = append(sec.Charts, *c)
	}
	return sec
}

// environmentSection: what each run is only comparable with.
func environmentSection(ins []Input) section {
	sec := section{ID: "environment", Title: "Environment"}
	head := []string{""}
	for _, in := range ins {
		head = append(head, in.Name)
	}
	rows := [][]string{}
	addRow := func(name string, get func(r *result.Run) string) {
		row := []string{name}
		any := false
		for _, in := range ins {
			v := get(in.Run)
			any = any || v != ""
			row = append(row, v)
		}
		if any {
			rows = append(rows, row)
		}
	}
	addRow("command", func(r *result.Run) string { return strings.Join(r.Command, " ") })
	addRow("cnperf", func(r *result.Run) string { return r.Version })
	addRow("started", func(r *result.Run) string { return r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC") })
	addRow("rounds", func(r *result.Run) string {
		if r.Rounds == 0 {
			return ""
		}
		return strconv.Itoa(r.Rounds)
	})
	addRow("host", func(r *result.Run) string { return r.Environment.Hostname })
	addRow("kernel", func(r *result.Run) string { return r.Environment.Kernel })
	addRow("CPU", func(r *result.Run) string {
		return fmt.Sprintf("%s × %d", r.Environment.CPUModel, r.Environment.CPUs)
	})
	addRow("memory", func(r *result.Run) string {
		if r.Environment.MemoryBytes == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f GiB", float64(r.Environment.MemoryBytes)/(1<<30))
	})
	addRow("cpuidle", func(r *result.Run) string { return r.Environment.CPUIdle })
	addRow("CPU latency bound", func(r *result.Run) string {
		if r.Environment.CPULatencyUs == nil {
			return ""
		}
		return fmt.Sprintf("%d µs", *r.Environment.CPULatencyUs)
	})
	addRow("backend", func(r *result.Run) string { return r.Environment.Backend })
	addRow("underlay MTU", func(r *result.Run) string { return strconv.Itoa(r.Environment.UnderlayMTU) })
	addRow("kubernetes", func(r *result.Run) string {
		k := r.Environment.Kubernetes
		if k == nil {
			return ""
		}
		return fmt.Sprintf("%s, CNI %s, kube-proxy %s, image %s", k.Version, k.CNI, k.ProxyMode, k.Image)
	})
	addRow("kubernetes nodes", func(r *result.Run) string {
		k := r.Environment.Kubernetes
		if k == nil {
			return ""
		}
		var s []string
		for _, n := range k.Nodes {
			var where []string
			for _, w := range []string{n.Zone, n.InstanceType} {
				if w != "" {
					where = append(where, w)
				}
			}
			if len(where) > 0 {
				s = append(s, n.Name+" ("+strings.Join(where, ", ")+")")
			} else {
				s = append(s, n.Name)
			}
		}
		return strings.Join(s, ", ")
	})
	addRow("kubernetes placement", func(r *result.Run) string {
		k := r.Environment.Kubernetes
		if k == nil {
			return ""
		}
		return cmp.Or(k.Placement, "the first schedulable nodes by name") + "; each result's params say its pods' nodes (kubernetes_nodes, kubernetes_zones)"
	})
	addRow("Go", func(r *result.Run) string { return r.Environment.GoVersion })
	sec.Tables = append(sec.Tables, htmlTable{Head: head, Rows: rows})
	rows = nil
	for _, m := range []struct {
		name string
		get  func(e result.Environment) map[string]string
	}{
		{"sysctl ", func(e result.Environment) map[string]string { return e.Sysctls }},
		{"offload ", func(e result.Environment) map[string]string { return e.Offloads }},
		{"tool ", func(e result.Environment) map[string]string { return e.Tools }},
	} {
		keys := map[string]bool{}
		for _, in := range ins {
			for k := range m.get(in.Run.Environment) {
				keys[k] = true
			}
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			addRow(m.name+k, func(r *result.Run) string { return m.get(r.Environment)[k] })
		}
	}
	if len(rows) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Folded: true, Caption: fmt.Sprintf("sysctls, offloads and tools (%d rows)", len(rows)), Head: head, Rows: rows})
	}
	return sec
}

// networksSection: per network, the commands that built it (the run's
// builds, where its backend kept them); and what was skipped, with why.
func networksSection(ins []Input) section {
	sec := section{ID: "networks", Title: "Networks: how each was built"}
	var nets []string
	built := map[string]bool{}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			if !slices.Contains(nets, r.Network) {
				nets = append(nets, r.Network)
			}
		}
		for _, b := range in.Run.Builds {
			rows := make([][]string, 0, len(b.Commands))
			for i, c := range b.Commands {
				rows = append(rows, []string{fmt.Sprint(i + 1), c})
			}
			what := b.Network
			if len(ins) > 1 {
				what = in.Name + ": " + what
			}
			sec.Tables = append(sec.Tables, htmlTable{Folded: true,
				Caption: fmt.Sprintf("%s (%s %s): %d commands, in order", what, cmp.Or(b.Backend, "lab"), b.ID, len(b.Commands)),
				Head:    []string{"#", "command"}, Rows: rows})
			built[b.Network] = true
		}
	}
	rows := [][]string{}
	for _, n := range nets {
		if !built[n] {
			rows = append(rows, []string{n, "not recorded in the run file", "cnperf lab --network " + n})
		}
	}
	if len(rows) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{
			Caption: "These run files do not record the commands that built these networks (files written before cnperf kept them, or a backend that does not). `cnperf lab --network NAME` builds the same network and keeps it up to inspect (ip -n NAMESPACE ...); the exact commands each network issues are locked by its golden test, internal/netmode/<network>/testdata/*.golden.",
			Head:    []string{"network", "build commands", "to inspect it"}, Rows: rows})
	}
	var skips [][]string
	for _, in := range ins {
		for _, s := range in.Run.Skipped {
			skips = append(skips, []string{in.Name, s.Network, s.Workload, s.Placement, s.Reason})
		}
	}
	if len(skips) > 0 {
		sec.Tables = append(sec.Tables, htmlTable{Caption: "Asked for but not run here", Head: []string{"run", "network", "workload", "placement", "reason"}, Rows: skips})
	}
	return sec
}
