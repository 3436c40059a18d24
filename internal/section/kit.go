package section

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// Input is one run file given to the HTML report or the CSV export: Name
// tells overlaid runs apart (the file's base name).
type Input struct {
	Name string
	Run  *result.Run
}

// Chart kinds the page's script knows how to draw (see html.js).
const (
	ChartInterval = "interval" // categories; a point per series with its interval as a floating bar
	ChartLines    = "lines"    // x/y points joined per series
	ChartStacked  = "stacked"  // categories; one stacked bar segment per series
	ChartBars     = "bars"     // categories; one bar per series, side by side
)

// Chart is one plot, independent of the plotting library: the page's
// script turns it into a Chart.js configuration.
type Chart struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Kind   string   `json:"kind"`
	XLabel string   `json:"xlabel,omitempty"`
	YLabel string   `json:"ylabel,omitempty"`
	XLog   bool     `json:"xlog,omitempty"`
	YLog   bool     `json:"ylog,omitempty"`
	Labels []string `json:"labels,omitempty"` // categories (interval, stacked, or a lines chart with category x)
	Series []Series `json:"series"`
	// Ref marks a reference value on y (1 = the baseline of a ratio).
	Ref      *float64 `json:"ref,omitempty"`
	RefLabel string   `json:"ref_label,omitempty"`
	Note     string   `json:"-"`
}

// Series is one line or one set of bars of a chart.
type Series struct {
	Label  string  `json:"label"`
	Points []Point `json:"points"`
	Dashed bool    `json:"dashed,omitempty"`
	// Band names what an interval chart's floating bar is (default "95%
	// interval"): a published range, say.
	Band string `json:"band,omitempty"`
}

// Point is a value at X (a number) or at category Cat; Lo and Hi bound it
// when an interval is known.
type Point struct {
	X   *float64 `json:"x,omitempty"`
	Cat string   `json:"cat,omitempty"`
	Y   float64  `json:"y"`
	Lo  *float64 `json:"lo,omitempty"`
	Hi  *float64 `json:"hi,omitempty"`
}

// Empty says a chart has no point to draw.
func (c Chart) Empty() bool {
	for _, s := range c.Series {
		if len(s.Points) > 0 {
			return false
		}
	}
	return true
}

// AddIntervalPoint adds category cat's value y (with its interval when
// hasCI) to the series name, both added when new.
func (c *Chart) AddIntervalPoint(name, cat string, y float64, hasCI bool, lo, hi float64) {
	if !slices.Contains(c.Labels, cat) {
		c.Labels = append(c.Labels, cat)
	}
	i := slices.IndexFunc(c.Series, func(s Series) bool { return s.Label == name })
	if i < 0 {
		c.Series = append(c.Series, Series{Label: name})
		i = len(c.Series) - 1
	}
	p := Point{Cat: cat, Y: y}
	if hasCI {
		p.Lo, p.Hi = &lo, &hi
	}
	c.Series[i].Points = append(c.Series[i].Points, p)
}

// HTMLSection is one part of the page; Charts and Tables hold only what
// the runs have data for.
type HTMLSection struct {
	ID     string
	Title  string
	Intro  string
	Charts []Chart
	Tables []Table
	Notes  []string
	// Answer is the summary of the verdicts (Answer), drawn right after
	// the section's charts.
	Answer []string
	// Subs are parts of the section under their own heading (a study's
	// table each), drawn after its own charts and tables.
	Subs []HTMLSection
}

// Table is a table of the page.
type Table struct {
	// Folded tables start closed (<details>), Caption their summary line.
	Folded  bool
	Caption string
	Head    []string
	Rows    [][]string
}

// SeriesName names a series: the cell, prefixed by the run when several
// are overlaid.
func SeriesName(in Input, overlay bool, s string) string {
	if overlay {
		return in.Name + ": " + s
	}
	return s
}

// CellLabel names a cell on a chart: network, placement and load balancer.
func CellLabel(k result.CellKey) string {
	s := k.Network + " " + k.Placement
	if k.LB != "" {
		s += " lb=" + k.LB
	}
	return s
}

// UnitOf is a figure's axis label: its label and its unit.
func UnitOf(f result.Figure) string {
	if f.Unit != "" && f.Unit != f.Label {
		return f.Label + " (" + f.Unit + ")"
	}
	return f.Label
}

// Saturation codes: why a step did not hold its rate, as far as the
// engine could tell (loadgen's conns_busy_pct); the value the saturated
// flag's figure reads as.
const (
	SatNo     = 0
	SatYes    = 1 // no cause recorded (results from before conns_busy_pct)
	SatClient = 2 // a connection was always free: the client thread was late
	SatServer = 3 // every connection was busy while requests were due
)

// Format prints a figure's value in its unit, as the table does.
func Format(f result.Figure, v float64) string {
	switch f.Kind {
	case result.KindRate, result.KindBytes, result.KindCount:
		if f.Scale != 0 && f.Scale != 1 {
			return fmt.Sprintf("%.2f", f.Display(v))
		}
		return Count(v)
	case result.KindLatency, result.KindTime:
		return fmt.Sprintf("%.1f", f.Display(v))
	case result.KindRatio:
		if f.Unit == "%" {
			return fmt.Sprintf("%.2f%%", v*100)
		}
		return fmt.Sprintf("%.3f", f.Display(v))
	case result.KindFlag:
		switch v {
		case SatYes:
			return "YES"
		case SatClient:
			return "YES client"
		case SatServer:
			return "YES server"
		}
		return "no"
	}
	return fmt.Sprintf("%.2f", f.Display(v))
}

// Count prints a count: 950, 12.3k, 1.25M.
func Count(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// MedianCI is xs's median and its 95 % interval (none under 2 values).
func MedianCI(xs []float64) (m, lo, hi float64, ok bool) {
	m = stats.Median(xs)
	lo, hi, method := stats.Interval(xs, 0.95)
	return m, lo, hi, method != stats.MethodNone
}

// The table's marks of the machine's speed (stats.Speeds).
const (
	// MarkMinoritySpeed follows a figure some of whose rounds ran while
	// the machine was at the speed fewer cells ran at.
	MarkMinoritySpeed = "§"
	// MarkSpeedsDiffer follows a ratio whose rounds ran the two cells at
	// different speeds, with too few same-speed pairs to use instead.
	MarkSpeedsDiffer = "†"
	// MarkRepaired follows a ratio that does not rest on every round
	// paired with its own round: re-paired by speed (some rounds paired
	// with the reference's round of the same speed, some left out), or
	// rounds one of the cells failed in left out; the count after it
	// says how many rounds it rests on (‡3/5).
	MarkRepaired = "‡"
)

// Repaired says whether c was paired by the machine's speed other than
// round by round (stats.pairBySpeed's SpeedMatched: some rounds paired
// across rounds or left out), and on how many of the rounds both cells
// ran.
func Repaired(c result.Comparison) (pairs, rounds int, ok bool) {
	if c.Speed == nil || c.Speed.Method != result.SpeedMatched {
		return 0, 0, false
	}
	return c.Speed.Pairs, c.Speed.Rounds, true
}

// Ratio prints a comparison with its verdict's mark and its interval:
// 0.82x [0.78, 0.86] differs, =1.01x [0.98, 1.03] equivalent, ?0.84x
// [0.73, 0.97] undecided.
func Ratio(c result.Comparison) string {
	s := VerdictMark(c) + fmt.Sprintf("%.2fx", c.Ratio)
	if c.Speed != nil && c.Speed.Method == result.SpeedUnmatched {
		s += MarkSpeedsDiffer
	}
	if k, n, ok := Repaired(c); ok {
		s += fmt.Sprintf("%s%d/%d", MarkRepaired, k, n)
	}
	if c.CILow != 0 || c.CIHigh != 0 {
		s += fmt.Sprintf(" [%.2f, %.2f]", c.CILow, c.CIHigh)
	}
	return s
}

// VerdictMark is the mark a printed comparison carries: none when it
// differs, "=" when it is equivalent, "?" when undecided.
func VerdictMark(c result.Comparison) string {
	switch stats.VerdictOf(c) {
	case stats.Differs:
		return ""
	case stats.Equivalent:
		return "="
	}
	return "?"
}

// AboveOne says, per direction, what a ratio above 1 means for the
// columns it names (titles[i] of figs[i]): "above 1 is faster/more
// (tcp_rr trans/s); above 1 is slower/longer (startup ms)". A table's
// ratios are of rates (higher is better) and of times (lower is better):
// one sentence for both would be wrong for one of them.
func AboveOne(titles []string, figs []result.Figure) string {
	var senses []string
	by := map[string][]string{}
	for i, f := range figs {
		s := f.AboveOne()
		if _, ok := by[s]; !ok {
			senses = append(senses, s)
		}
		by[s] = append(by[s], titles[i])
	}
	if len(senses) == 0 {
		return "above 1 is faster/more"
	}
	var parts []string
	for _, s := range senses {
		parts = append(parts, "above 1 is "+s+" ("+strings.Join(by[s], ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// PlacementOrder sorts placements as the table does: same-pod, same-host,
// then the others.
func PlacementOrder(p string) int {
	switch p {
	case "same-pod":
		return 0
	case "same-host":
		return 1
	}
	return 2
}

// VerdictRow is one ratio's line in a page's table of verdicts: run,
// workload, cell, figure, the ratio with its interval, the verdict, and
// the rounds that would decide it.
func VerdictRow(run, workload, cell, figure string, c result.Comparison) []string {
	v := stats.VerdictOf(c)
	switch {
	case v == stats.Differs:
		v += ": " + c.Direction
	case v == stats.Equivalent:
		v += fmt.Sprintf(" (within ±%.0f %%)", 100*c.MinEffect)
	case c.CILevel == 0:
		v += ": one round, no test"
	default:
		v += ": not shown"
	}
	decide := "-"
	switch {
	case stats.VerdictOf(c) != stats.Undecided:
	case c.Speed != nil && c.Speed.Method == result.SpeedUnmatched:
		decide = "rounds at one machine speed, not more rounds (†)"
	case c.CILevel == 0:
		decide = "3 or more (--repeat)"
	case c.RoundsNeeded > 0:
		decide = strconv.Itoa(c.RoundsNeeded)
	default:
		decide = "more than 1000"
	}
	return []string{run, workload, cell, figure, Ratio(c), v, decide}
}

// satKey is the saturated flag's figure key: it reads as its cause.
var satKey = result.ExtraKey(result.ExtraSaturated)

// Saturation reads why a step did not hold its rate (SatNo... SatServer),
// and whether the result says at all.
func Saturation(m result.Metrics) (float64, bool) {
	v, ok := m.Extra[result.ExtraSaturated]
	if !ok || v != 1 {
		return SatNo, ok
	}
	b, ok := m.Extra[result.ExtraConnsBusy]
	switch {
	case !ok:
		return SatYes, true
	case b >= 0.1:
		return SatServer, true
	}
	return SatClient, true
}

// Value reads a figure of one result, as the table does. A latency of a
// step that did not hold its rate is not valid and reads as absent; the
// saturated flag reads as its cause (Saturation).
func Value(f result.Figure, m result.Metrics) (float64, bool) {
	switch {
	case f.Key == satKey:
		return Saturation(m)
	case f.Kind == result.KindLatency && m.Extra[result.ExtraSaturated] == 1:
		return 0, false
	}
	v, ok := m.Value(f.Key)
	if !ok && f.ZeroIfAbsent {
		return 0, true
	}
	return v, ok
}

// Chartable says a figure is a number worth a bar: counts and flags are
// not.
func Chartable(f result.Figure) bool {
	return f.Kind != result.KindCount && f.Kind != result.KindFlag
}

// SizeOf reads the message size of a sweep's step ("size=1024", "size=1024
// flows=4"), 0 for a result not of a sweep (a load step "rate=R size=N"
// names a response size).
func SizeOf(step string) int {
	f := strings.Fields(step)
	if len(f) == 0 {
		return 0
	}
	v, ok := strings.CutPrefix(f[0], "size=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(v)
	return n
}

// AllCharts are the charts of every group, in the order the groups came.
func AllCharts[K comparable](groups *Rows[K, []Chart]) []Chart {
	var out []Chart
	for _, k := range groups.Keys {
		out = append(out, *groups.Of(k)...)
	}
	return out
}

// LinePoints are a line's points from its values by x: in x order, each
// agg (a mean, a median) of its values.
func LinePoints(m map[float64][]float64, agg func([]float64) float64) []Point {
	var pts []Point
	for _, x := range slices.Sorted(maps.Keys(m)) {
		pts = append(pts, Point{X: result.F(x), Y: agg(m[x])})
	}
	return pts
}

// Mean is the mean of xs, 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, v := range xs {
		s += v
	}
	return s / float64(len(xs))
}

// Param reads a result's number parameter (a number, or a string holding
// one), 0 when it has none.
func Param(r result.Result, key string) float64 {
	switch v := r.Params[key].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}

// MedianOK is the median of xs; ok is false when there are none.
func MedianOK(xs []float64) (m float64, ok bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return stats.Median(xs), true
}
