package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// SeedTable is one table or figure of a source study (seeddata.go): its
// rows as the study names them, the cnperf cells that stand for each, and
// the study's numbers as printed.
type SeedTable struct {
	ID     string
	Source string // the study's text, e.g. "seeds/000_....txt"
	Cite   string // where in it the numbers are
	Title  string
	Suite  string // the cnperf suite that reproduces it
	Form   SeedForm
	Unit   string // of the published values
	// Reference names the row the study compares against (ratio forms and
	// Difference); it is one of Rows.
	Reference string
	// What cnperf cells the rows read: any of Workloads (a column may name
	// its own), in Placement (a row may override), whose step holds every
	// field of Step (a row may override), at MessageSize (params) when set,
	// with Conn the workload's connection style when set, at Services (0
	// none; MostServices: the largest count the run programmed).
	Workloads   []string
	Placement   string
	Step        []string
	MessageSize int
	Conn        string
	Services    int
	Columns     []SeedColumn
	Rows        []SeedRow
	Note        string
}

// SeedColumn is one published figure, and the cnperf metric that stands
// for it.
type SeedColumn struct {
	Label  string
	Metric string // a result.Metrics key
	// Workload, when set, is the one workload this column reads.
	Workload string
	// Params must match the result's params (e.g. direction=down).
	Params map[string]string
	// IsRatio: cnperf's metric is already the ratio to the reference
	// (measured in the same round), so no reference cell is read.
	IsRatio bool
	// Better is the metric's direction when no workload declares it.
	Better result.Better
}

// SeedRow is one row of the study.
type SeedRow struct {
	Name string
	// Networks stand for the row in cnperf (several for a row that is an
	// average over networks); none means any network (a load balancer row).
	Networks []string
	LB       string
	// Placement and Step, when set, replace the table's for this row.
	Placement string
	Step      []string
	// Values as published, one per column (NaN: not given, see Lo/Hi).
	Values []float64
	// Lo and Hi, when set, are a published range (or a bound) per column
	// in the table's form (NaN or absent: open).
	Lo, Hi []float64
	// Approx quotes the text when the value is read from words ("close to
	// the baseline"), not a printed number.
	Approx string
	// Outlier: the study itself doubts the row; it is shown, not ordered.
	Outlier string
}

// SeedForm says how a table's published values read.
type SeedForm string

// The forms.
const (
	Absolute   SeedForm = "absolute"   // a value in Unit; the ratio is row / reference
	ChangePct  SeedForm = "change %"   // the row's change against the reference, %
	RefGainPct SeedForm = "ref gain %" // how much the reference is above the row, %
	Times      SeedForm = "times"      // the row's value as a multiple of the reference's
	Difference SeedForm = "difference" // the row's value minus the reference's, in Unit
	Rank       SeedForm = "rank"       // 1 = best: an order the text states, no figure
)

// MostServices as SeedTable.Services reads the cells at the largest
// number of services the run programmed.
const MostServices = -1

// ratioForm says the study's values make a ratio to its reference.
func (t SeedTable) ratioForm() bool {
	return t.Form == Absolute || t.Form == ChangePct || t.Form == RefGainPct || t.Form == Times
}

// toRatio converts a published value of form f to a ratio to the
// reference, given the reference's own published value (Absolute).
func toRatio(f SeedForm, v, ref float64) float64 {
	switch f {
	case Absolute:
		return v / ref
	case ChangePct:
		return 1 + v/100
	case RefGainPct:
		return 1 / (1 + v/100)
	case Times:
		return v
	}
	return math.NaN()
}

// seedRatio is the study's ratio for row r, column c: a point, or a range
// (lo, hi; NaN when open).
type seedRatio struct {
	v, lo, hi float64
}

func (s seedRatio) isRange() bool { return math.IsNaN(s.v) }

func (t SeedTable) refRow() (SeedRow, bool) {
	for _, r := range t.Rows {
		if r.Name == t.Reference {
			return r, true
		}
	}
	return SeedRow{}, false
}

func at(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return math.NaN()
}

func (t SeedTable) ratio(r SeedRow, c int) seedRatio {
	ref := math.NaN()
	if rr, ok := t.refRow(); ok {
		ref = at(rr.Values, c)
	}
	s := seedRatio{v: toRatio(t.Form, at(r.Values, c), ref), lo: math.NaN(), hi: math.NaN()}
	if lo := at(r.Lo, c); !math.IsNaN(lo) {
		s.lo = toRatio(t.Form, lo, ref)
	}
	if hi := at(r.Hi, c); !math.IsNaN(hi) {
		s.hi = toRatio(t.Form, hi, ref)
	}
	if t.Form == RefGainPct { // a larger gain is a smaller ratio
		s.lo, s.hi = s.hi, s.lo
	}
	return s
}

// seedCell is one cnperf cell standing for a row in a column: per round,
// the metric's value (rounds 0: a file without rounds).
type seedCell struct {
	key    result.CellKey
	fig    result.Figure
	rounds map[int][]float64
	// cm compares the run's cells by the machine's speed where both
	// recorded it (nil: the run has no speed witness)
	cm *stats.Comparer
}

func (c *seedCell) samples() []sample2 {
	var out []sample2
	for r, vs := range c.rounds {
		for _, v := range vs {
			out = append(out, sample2{r, v})
		}
	}
	slices.SortFunc(out, func(a, b sample2) int { return a.round - b.round })
	return out
}

type sample2 struct {
	round int
	v     float64
}

func (c *seedCell) values() []float64 {
	var out []float64
	for _, s := range c.samples() {
		out = append(out, s.v)
	}
	return out
}

// seedFigure is the figure a metric of workload wl is read and shown as.
func seedFigure(wl, metric string, better result.Better) result.Figure {
	if f, ok := kit.FigureOf(wl, metric); ok {
		return f
	}
	f := result.Figure{Key: metric, Label: metric, Better: cmp.Or(better, result.HigherBetter), Kind: result.KindRatio}
	switch {
	case strings.HasPrefix(metric, "latency_us."):
		f.Unit, f.Label, f.Better, f.Kind = "us", strings.TrimPrefix(metric, "latency_us.")+" us", result.LowerBetter, result.KindLatency
	case metric == result.KeyThroughput:
		f = result.FigThroughput
	case metric == result.KeyTransactions:
		f = result.FigTransactions
	case metric == result.ExtraKey(result.ExtraDropPct):
		f.Label, f.Unit, f.Kind = "drop", "%", "" // already a percentage
	}
	return f
}

// stepHas says every field of want is a field of step.
func stepHas(step string, want []string) bool {
	fs := strings.Fields(step)
	for _, w := range want {
		if !slices.Contains(fs, w) {
			return false
		}
	}
	return true
}

// plainStep says a step is what a table without a step filter reads: no
// step, or only a message size (a sweep's, checked against the table's
// size), a service count (checked against the table's), or a measurement
// without neighbours. A load step, flows at once or neighbours are other
// experiments than the study's.
func plainStep(step string) bool {
	for _, f := range strings.Fields(step) {
		if !strings.HasPrefix(f, "size=") && !strings.HasPrefix(f, "services=") && f != "neighbours=none" {
			return false
		}
	}
	return true
}

// match collects the cnperf cells of row r in column c of t from run.
func (t SeedTable) match(run *result.Run, r SeedRow, c SeedColumn, most map[string]int, cm *stats.Comparer) []*seedCell {
	wls := t.Workloads
	if c.Workload != "" {
		wls = []string{c.Workload}
	}
	pl := t.Placement
	if r.Placement != "" {
		pl = r.Placement
	}
	step := t.Step
	if r.Step != nil {
		step = r.Step
	}
	var out []*seedCell
	by := map[result.CellKey]*seedCell{}
	for _, res := range run.Results {
		if res.Error != "" || !slices.Contains(wls, res.Workload) || res.LB != r.LB ||
			(len(r.Networks) > 0 && !slices.Contains(r.Networks, res.Network)) ||
			(pl != "" && res.Placement != pl) || !stepHas(res.Step, step) || (step == nil && !plainStep(res.Step)) ||
			(t.MessageSize > 0 && kit.Param(res, "message_size") != float64(t.MessageSize)) {
			continue
		}
		switch t.Services {
		case MostServices:
			if res.Services == 0 || res.Services != most[res.Workload] {
				continue
			}
		default:
			if res.Services != t.Services {
				continue
			}
		}
		if t.Conn != "" && workload.ConnectionsOf(res.Workload, res.Params).Style != t.Conn {
			continue
		}
		ok := true
		for k, want := range c.Params {
			if fmt.Sprint(res.Params[k]) != want {
				ok = false
			}
		}
		if !ok {
			continue
		}
		f := seedFigure(res.Workload, c.Metric, c.Better)
		v, has := value(f, res.Metrics)
		if !has {
			continue
		}
		k := res.Key()
		sc := by[k]
		if sc == nil {
			sc = &seedCell{key: k, fig: f, rounds: map[int][]float64{}, cm: cm}
			by[k] = sc
			out = append(out, sc)
		}
		sc.rounds[res.Round] = append(sc.rounds[res.Round], v)
	}
	return out
}

// counterpart finds, among the reference row's cells, the one cell c is
// compared with: the same workload and services, and the same network,
// placement and step unless the reference row names its own.
func counterpart(c *seedCell, refRow SeedRow, refs []*seedCell) *seedCell {
	for _, r := range refs {
		k, rk := c.key, r.key
		if k.Workload != rk.Workload || k.Backend != rk.Backend {
			continue
		}
		if len(refRow.Networks) != 1 && k.Network != rk.Network {
			continue
		}
		if refRow.Placement == "" && k.Placement != rk.Placement {
			continue
		}
		if refRow.Step == nil && kit.StepWithout(k.Step, "services=") != kit.StepWithout(rk.Step, "services=") {
			continue
		}
		if k.Services != rk.Services && refRow.LB != result.ReferenceLB {
			continue
		}
		return r
	}
	return nil
}

// seedMeasure is cnperf's figure for one cell of a row: a ratio to the
// reference (ratio forms), a difference (Difference), or the value (Rank),
// with its interval when the rounds give one, and for the ratio forms the
// comparison with the reference the ratio comes from (its verdict).
type seedMeasure struct {
	cell   *seedCell
	v      float64
	lo, hi float64
	hasCI  bool
	rounds int
	cmp    *result.Comparison
}

// pairByRound pairs a's and b's values by round (medians where a round
// has several); ok false when a side has no rounds.
func pairByRound(a, b *seedCell) (x, y []float64, ok bool) {
	if _, none := a.rounds[0]; none {
		return nil, nil, false
	}
	if _, none := b.rounds[0]; none {
		return nil, nil, false
	}
	var rs []int
	for r := range a.rounds {
		if _, ok := b.rounds[r]; ok {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	for _, r := range rs {
		x = append(x, stats.Median(a.rounds[r]))
		y = append(y, stats.Median(b.rounds[r]))
	}
	return x, y, len(x) > 0
}

// compareSeedCells compares a's values with b's: paired by round when both
// have rounds, otherwise unpaired; a nil b stands for the constant 1 (a
// column that is already a ratio to a reference not measured as a cell).
func compareSeedCells(a, b *seedCell) (result.Comparison, bool) {
	if b == nil {
		vs := a.values()
		return stats.Paired(vs, slices.Repeat([]float64{1}, len(vs)), a.fig.Better, stats.Default)
	}
	if a.cm != nil {
		// where both cells recorded the machine's speed, paired by it
		// (a ratio mixing speeds stays undecided: the table's †)
		if c, ok := a.cm.Compare(a.key, b.key, a.fig, stats.Default); ok && c.Speed != nil {
			return c, true
		}
	}
	if x, y, paired := pairByRound(a, b); paired {
		return stats.Paired(x, y, a.fig.Better, stats.Default)
	}
	return stats.Unpaired(a.values(), b.values(), a.fig.Better, stats.Default)
}

func (t SeedTable) measure(c *seedCell, ref *seedCell, col SeedColumn) (seedMeasure, bool) {
	m := seedMeasure{cell: c}
	switch {
	case col.IsRatio || t.Form == Rank:
		vs := c.values() // raw: format displays them in the figure's unit
		m.v, m.rounds = stats.Median(vs), len(vs)
		if lo, hi, method := stats.Interval(vs, 0.95); method != stats.MethodNone {
			m.lo, m.hi, m.hasCI = lo, hi, true
		}
		if col.IsRatio {
			if cmp, ok := compareSeedCells(c, nil); ok {
				m.cmp = &cmp
			}
		}
		return m, len(vs) > 0
	case ref == nil:
		return m, false
	case t.Form == Difference:
		var d []float64
		if x, y, ok := pairByRound(c, ref); ok {
			for i := range x {
				d = append(d, c.fig.Display(x[i]-y[i]))
			}
		} else {
			d = []float64{c.fig.Display(stats.Median(c.values()) - stats.Median(ref.values()))}
		}
		m.v, m.rounds = stats.Median(d), len(d)
		if lo, hi, method := stats.Interval(d, 0.95); method != stats.MethodNone {
			m.lo, m.hi, m.hasCI = lo, hi, true
		}
		return m, true
	}
	cmp, ok := compareSeedCells(c, ref)
	if !ok {
		return m, false
	}
	m.v, m.rounds = cmp.Ratio, cmp.N
	if c.key != ref.key { // the reference row against itself is 1 by definition, no verdict
		m.cmp = &cmp
	}
	if cmp.CILevel > 0 {
		m.lo, m.hi, m.hasCI = cmp.CILow, cmp.CIHigh, true
	}
	return m, true
}

// SeedRowResult is one study row in one column beside cnperf's cells.
type SeedRowResult struct {
	Row      SeedRow
	Study    seedRatio // ratio forms; for Difference and Rank, v is the published value
	Measures []seedMeasure
}

// SeedColumnResult is one column: its rows and what cnperf shows of the
// study's order. Each pair of rows the study orders is compared here cell
// against cell (paired by round) and lands in one of four lists.
type SeedColumnResult struct {
	Column SeedColumn
	Rows   []SeedRowResult
	Pairs  int // pairs the study orders that cnperf measured
	// Shown: the pair differs here in the study's direction.
	Shown []string
	// SameNotShown: the study's order, not shown (undecided or level).
	SameNotShown []string
	// OppositeNotShown: the opposite order (or level), not shown: within
	// the noise, or untested (one round).
	OppositeNotShown []string
	// Against: the pair differs here in the opposite direction.
	Against []string
	Verdict string
	// Family is the correction of the pairs' verdicts for their number
	// (Holm; none with --uncorrected).
	Family stats.Family
}

// SeedResult is a study table set beside one run.
type SeedResult struct {
	Table   SeedTable
	Columns []SeedColumnResult
	Missing []string // study rows the run has no cells for, with why
}

// The ordering verdicts, from the pairs' (SeedColumnResult).
const (
	// every pair the study orders differs here in the study's direction
	VerdictReproduces = "reproduces"
	// no pair differs against the study, none comes opposite, some are
	// in the study's order without being shown
	VerdictNotShown = "same order, not shown"
	// some pair comes in the opposite order, none shown so
	VerdictOpposite = "opposite, within noise"
	// the same with no interval to judge it by (one round)
	VerdictOppositeUntested = "opposite, not tested (one round: run --repeat 3)"
	// some pair differs here in the opposite direction
	VerdictNot     = "does not reproduce"
	VerdictNothing = "nothing to order"
)

// CompareSeeds sets every study table the run holds cells for beside it.
// A table is compared when the run has cells for at least two of its rows
// (or one, for a column that is already a ratio).
func CompareSeeds(run *result.Run) []SeedResult {
	most := map[string]int{}
	for _, r := range run.Results {
		if r.Services > most[r.Workload] {
			most[r.Workload] = r.Services
		}
	}
	// pairs respect the machine's speed as the table's ratios do
	var cm *stats.Comparer
	if slices.ContainsFunc(run.Results, func(r result.Result) bool { return r.MachineSpeed != nil }) {
		cm = stats.NewComparer(run.Results)
	}
	var out []SeedResult
	for _, t := range SeedTables {
		sr := SeedResult{Table: t}
		measured := map[string]bool{}
		refRow, hasRef := t.refRow()
		for ci, col := range t.Columns {
			cr := SeedColumnResult{Column: col}
			var refs []*seedCell
			if hasRef {
				refs = t.match(run, refRow, col, most, cm)
			}
			for _, row := range t.Rows {
				rr := SeedRowResult{Row: row}
				switch {
				case t.ratioForm():
					rr.Study = t.ratio(row, ci)
				default:
					rr.Study = seedRatio{v: at(row.Values, ci), lo: math.NaN(), hi: math.NaN()}
				}
				for _, c := range t.match(run, row, col, most, cm) {
					var ref *seedCell
					if hasRef && !col.IsRatio && t.Form != Rank {
						ref = counterpart(c, refRow, refs)
					}
					if m, ok := t.measure(c, ref, col); ok {
						rr.Measures = append(rr.Measures, m)
						measured[row.Name] = true
					}
				}
				cr.Rows = append(cr.Rows, rr)
			}
			t.order(&cr)
			sr.Columns = append(sr.Columns, cr)
		}
		n := len(measured)
		if hasRef && measured[t.Reference] {
			n-- // the reference alone compares nothing
		}
		if n == 0 || (t.Form == Rank && len(measured) < 2) {
			continue
		}
		for _, row := range t.Rows {
			if !measured[row.Name] {
				sr.Missing = append(sr.Missing, row.Name+": "+whyMissing(run, t, row))
			}
		}
		out = append(out, sr)
	}
	return out
}

// whyMissing says why the run has no cell for a row: the run's own skip
// reason for its network when it recorded one.
func whyMissing(run *result.Run, t SeedTable, row SeedRow) string {
	for _, s := range run.Skipped {
		if (len(row.Networks) == 0 || slices.Contains(row.Networks, s.Network)) &&
			(row.LB == "" || strings.Contains(s.Reason, row.LB) || strings.Contains(s.Network, row.LB)) {
			return "not measured here: " + s.Reason
		}
	}
	if row.LB != "" {
		return "not in this run (cnperf run --lb " + row.LB + " measures it)"
	}
	return "not in this run (cnperf run --networks " + strings.Join(row.Networks, ",") + " measures it)"
}

// order judges, for every pair of rows the study orders, cnperf's cells
// of the same workload: compared with each other (paired by round), a pair
// is shown in the study's order only when it differs that way.
func (t SeedTable) order(cr *SeedColumnResult) {
	type item struct {
		row   int
		study seedRatio
		m     seedMeasure
	}
	var items []item
	for i, rr := range cr.Rows {
		if rr.Row.Outlier != "" {
			continue
		}
		if t.ratioForm() && rr.Row.Name == t.Reference {
			// the reference is 1 on both sides, in every workload
			for _, w := range t.workloadsMeasured(cr) {
				items = append(items, item{i, rr.Study, seedMeasure{v: 1, cell: &seedCell{key: result.CellKey{Workload: w}}}})
			}
			continue
		}
		for _, m := range rr.Measures {
			items = append(items, item{i, rr.Study, m})
		}
	}
	type orderedPair struct {
		x, y   item
		sd, cd int
		cmp    result.Comparison
	}
	var pairs []orderedPair
	for a := 0; a < len(items); a++ {
		for b := a + 1; b < len(items); b++ {
			x, y := items[a], items[b]
			if x.row == y.row || x.m.cell.key.Workload != y.m.cell.key.Workload {
				continue
			}
			if x.m.cell.key.Network != "" && y.m.cell.key.Network != "" && x.m.cell.key.Backend != y.m.cell.key.Backend {
				continue // pairs are within one backend: the lab's vxlan is not ordered against a cluster's baseline
			}
			sd := studyOrder(t.Form, x.study, y.study)
			if sd == 0 {
				continue
			}
			cmp, ok := pairComparison(x.m, y.m)
			if !ok {
				continue
			}
			cd := 0 // +1: x's value above y's here
			switch {
			case cmp.Ratio > 1:
				cd = 1
			case cmp.Ratio < 1:
				cd = -1
			}
			if t.Form == Rank && x.m.cell.fig.Better != result.LowerBetter {
				cd = -cd // a larger value is a better (smaller) rank
			}
			pairs = append(pairs, orderedPair{x, y, sd, cd, cmp})
		}
	}
	// the column's pairs are one family: a pair is shown (or against) only
	// after Holm's correction for their number, as the table's verdicts
	cmps := make([]*result.Comparison, len(pairs))
	for i := range pairs {
		cmps[i] = &pairs[i].cmp
	}
	if !Uncorrected {
		cr.Family = stats.CorrectFamily(cmps, 0)
	}
	untestedOpposite := true
	for _, p := range pairs {
		{
			x, y, sd, cd, cmp := p.x, p.y, p.sd, p.cd, p.cmp
			cr.Pairs++
			rel := map[int]string{1: ">", -1: "<", 0: "="}[cd]
			pair := fmt.Sprintf("%s %s %s (%s)", cellName(x.m, cr.Rows[x.row].Row), rel, cellName(y.m, cr.Rows[y.row].Row), pairEvidence(cmp))
			v := stats.VerdictOf(cmp)
			switch {
			case v == stats.Differs && cd == sd:
				cr.Shown = append(cr.Shown, pair)
			case v == stats.Differs:
				cr.Against = append(cr.Against, pair)
			case cd == sd:
				cr.SameNotShown = append(cr.SameNotShown, pair)
			default:
				cr.OppositeNotShown = append(cr.OppositeNotShown, pair)
				untestedOpposite = untestedOpposite && cmp.CILevel == 0
			}
		}
	}
	switch {
	case cr.Pairs == 0:
		cr.Verdict = VerdictNothing
	case len(cr.Against) > 0:
		cr.Verdict = VerdictNot
	case len(cr.OppositeNotShown) > 0 && untestedOpposite:
		cr.Verdict = VerdictOppositeUntested
	case len(cr.OppositeNotShown) > 0:
		cr.Verdict = VerdictOpposite
	case len(cr.SameNotShown) > 0:
		cr.Verdict = VerdictNotShown
	default:
		cr.Verdict = VerdictReproduces
	}
}

// pairComparison is x's cell against y's (x over y): the two cells paired
// by round; where one side is the reference's stand-in (the ratio forms'
// 1), the other's own comparison with the reference, turned around when
// the stand-in is x.
func pairComparison(x, y seedMeasure) (result.Comparison, bool) {
	switch {
	case x.cell.key.Network == "" && y.cell.key.Network == "":
		return result.Comparison{}, false
	case y.cell.key.Network == "":
		if x.cmp == nil {
			return result.Comparison{}, false
		}
		return *x.cmp, true
	case x.cell.key.Network == "":
		if y.cmp == nil {
			return result.Comparison{}, false
		}
		return invert(*y.cmp), true
	}
	return compareSeedCells(x.cell, y.cell)
}

// invert turns a comparison of a over b into b over a.
func invert(c result.Comparison) result.Comparison {
	c.Ratio = 1 / c.Ratio
	if c.CILevel > 0 {
		c.CILow, c.CIHigh = 1/c.CIHigh, 1/c.CILow
	}
	switch c.Direction {
	case stats.Better:
		c.Direction = stats.Worse
	case stats.Worse:
		c.Direction = stats.Better
	case stats.Higher:
		c.Direction = stats.Lower
	case stats.Lower:
		c.Direction = stats.Higher
	}
	return c
}

// pairEvidence is the comparison behind a pair: "0.62x [0.55, 0.70],
// differs"; "one round, no test" without an interval.
func pairEvidence(c result.Comparison) string {
	if c.CILevel == 0 {
		return fmt.Sprintf("%sx, one round, no test", fmtRatio(c.Ratio))
	}
	s := fmt.Sprintf("%sx [%s, %s], %s", fmtRatio(c.Ratio), fmtRatio(c.CILow), fmtRatio(c.CIHigh), stats.VerdictOf(c))
	if stats.VerdictOf(c) == stats.Undecided && c.RoundsNeeded > 0 {
		s += fmt.Sprintf(": ~%d rounds would decide", c.RoundsNeeded)
	}
	return s
}

// studyOrder is 1 when the study puts x above y (a larger ratio or
// difference; for Rank, a larger rank number), -1 below, 0 when it does
// not order them: points within 5 % of each other, ranges that overlap,
// an open or missing value.
func studyOrder(f SeedForm, x, y seedRatio) int {
	if f == Rank {
		switch {
		case x.v > y.v:
			return 1
		case x.v < y.v:
			return -1
		}
		return 0
	}
	xl, xh := x.v, x.v
	if x.isRange() {
		xl, xh = x.lo, x.hi
	}
	yl, yh := y.v, y.v
	if y.isRange() {
		yl, yh = y.lo, y.hi
	}
	if f == Difference {
		switch {
		case xl > yh:
			return 1
		case xh < yl:
			return -1
		}
		return 0
	}
	switch {
	case !math.IsNaN(xl) && !math.IsNaN(yh) && xl > yh*1.05:
		return 1
	case !math.IsNaN(xh) && !math.IsNaN(yl) && xh*1.05 < yl:
		return -1
	}
	return 0
}

func (t SeedTable) workloadsMeasured(cr *SeedColumnResult) []string {
	var ws []string
	for _, rr := range cr.Rows {
		for _, m := range rr.Measures {
			if !slices.Contains(ws, m.cell.key.Workload) {
				ws = append(ws, m.cell.key.Workload)
			}
		}
	}
	return ws
}

// cellName names a cnperf cell standing for a study row.
func cellName(m seedMeasure, row SeedRow) string {
	k := m.cell.key
	if k.Network == "" { // the reference's stand-in
		return row.Name
	}
	s := k.Network
	if k.LB != "" {
		s = "lb=" + k.LB
	}
	if len(row.Networks) > 1 || row.Name != k.Network && row.Name != k.LB {
		s = row.Name + " (" + s + ")"
	}
	return s
}

// fmtRatio prints a ratio with 2-3 significant digits.
func fmtRatio(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func (s seedRatio) String() string {
	if !s.isRange() {
		return fmtRatio(s.v) + "x"
	}
	switch {
	case math.IsNaN(s.lo) && math.IsNaN(s.hi):
		return "-"
	case math.IsNaN(s.hi):
		return "≥ " + fmtRatio(s.lo) + "x"
	case math.IsNaN(s.lo):
		return "≤ " + fmtRatio(s.hi) + "x"
	}
	return fmtRatio(s.lo) + "-" + fmtRatio(s.hi) + "x"
}

func (m seedMeasure) ratioString() string {
	s := fmtRatio(m.v) + "x"
	if m.cmp != nil {
		s = verdictMark(*m.cmp) + s
	}
	if m.hasCI {
		s += " [" + fmtRatio(m.lo) + ", " + fmtRatio(m.hi) + "]"
	}
	return s
}

// agreement says how cnperf's ratio for a row compares with the study's
// in size, by the same evidence rule as the order verdicts: "same size"
// only where the evidence shows it: for a published range, cnperf's whole
// interval inside the range; for a published point, the point inside
// cnperf's interval and cnperf showing a change against the reference
// (or, for a study's "no change", equivalence). An interval that meets a
// range without lying inside it, or holds both the study's ratio and 1,
// is "not shown", with the rounds that would decide it at the spread
// seen. Otherwise, by cnperf's verdict against the reference, "same
// direction, N times the study's cost" (or gain), "opposite direction",
// "level here", or not shown either way.
func agreement(s seedRatio, m seedMeasure) string {
	if !m.hasCI {
		return "one round: no interval to judge the size by"
	}
	verdict, better := stats.Undecided, result.HigherBetter
	if m.cmp != nil {
		verdict = stats.VerdictOf(*m.cmp)
	}
	if m.cell != nil && m.cell.fig.Better == result.LowerBetter {
		better = result.LowerBetter
	}
	if s.isRange() {
		lo, hi := s.lo, s.hi
		switch {
		case math.IsNaN(lo) && math.IsNaN(hi):
			return "-"
		case (math.IsNaN(lo) || m.hi >= lo) && (math.IsNaN(hi) || m.lo <= hi):
			inside := (math.IsNaN(lo) || m.lo >= lo) && (math.IsNaN(hi) || m.hi <= hi)
			switch {
			case inside && !math.IsNaN(lo) && !math.IsNaN(hi):
				return "same size (inside the study's range)"
			case inside:
				return "within the study's bound"
			case !math.IsNaN(lo) && !math.IsNaN(hi):
				return "not shown: the interval reaches outside the study's range" + rangeRounds(m, lo, hi)
			}
			return "not shown either side of the study's bound" + rangeRounds(m, lo, hi)
		case !math.IsNaN(hi) && m.hi < hi:
			return "below the study's " + rangeWord(s) + " (" + verdictWord(verdict) + " against the reference)"
		}
		return "above the study's " + rangeWord(s) + " (" + verdictWord(verdict) + " against the reference)"
	}
	if m.lo <= s.v && s.v <= m.hi {
		switch {
		case verdict == stats.Differs, verdict == stats.Equivalent && math.Abs(s.v-1) <= m.cmp.MinEffect:
			return "same size"
		case m.lo <= 1 && 1 <= m.hi:
			return "not shown: the interval holds the study's ratio and 1 (no change)"
		}
		return "the study's size not ruled out, no verdict against the reference here"
	}
	switch verdict {
	case stats.Equivalent:
		if math.Abs(s.v-1) <= m.cmp.MinEffect {
			return "same size (level here, as in the study)"
		}
		return "level here (within 5 %), not the study's size"
	case stats.Undecided:
		return "not the study's size, and no verdict against the reference here"
	}
	if s.v == 1 {
		return "differs here; the study: no change"
	}
	if (s.v < 1) != (m.v < 1) {
		return "opposite direction"
	}
	what := "gain"
	if (s.v < 1) == (better == result.HigherBetter) {
		what = "cost"
	}
	return fmt.Sprintf("same direction, %s times the study's %s", fmtRatio(math.Abs(m.v-1)/math.Abs(s.v-1)), what)
}

// rangeRounds says how many rounds would put m's interval inside the
// study's range [lo, hi] or clear of it (either may be NaN: open), were
// the ratio and the spread to stay as seen: the standard error read back
// off the interval (its half-width in logs over t at the comparison's
// degrees of freedom) shrinks as 1/sqrt(rounds). "" without an estimate
// within 1000 rounds.
func rangeRounds(m seedMeasure, lo, hi float64) string {
	c := m.cmp
	if c == nil || c.CILevel <= 0 || c.N < 2 || c.CILow <= 0 {
		return ""
	}
	df := func(k int) float64 { return float64(k - 1) }
	if c.NAgainst > 0 {
		df = func(k int) float64 { return float64(2*k - 2) }
	}
	q := 1 - (1-c.CILevel)/2
	se0 := (math.Log(c.CIHigh) - math.Log(c.CILow)) / 2 / stats.TQuantile(q, df(c.N))
	if se0 <= 0 || math.IsNaN(se0) {
		return ""
	}
	r := math.Log(c.Ratio)
	l, h := math.Inf(-1), math.Inf(1)
	if !math.IsNaN(lo) {
		l = math.Log(lo)
	}
	if !math.IsNaN(hi) {
		h = math.Log(hi)
	}
	for k := c.N + 1; k <= 1000; k++ {
		w := stats.TQuantile(q, df(k)) * se0 * math.Sqrt(float64(c.N)/float64(k))
		if (r-w >= l && r+w <= h) || r+w < l || r-w > h {
			return fmt.Sprintf(" (about %d rounds would decide it at this spread)", k)
		}
	}
	return " (no round count within 1000 decides it at this spread)"
}

func rangeWord(s seedRatio) string {
	if math.IsNaN(s.lo) || math.IsNaN(s.hi) {
		return "bound"
	}
	return "range"
}

func verdictWord(v string) string {
	if v == stats.Differs {
		return "differs"
	}
	return v
}
