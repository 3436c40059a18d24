package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
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
	if f, ok := figureOf(wl, metric); ok {
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
func (t SeedTable) match(run *result.Run, r SeedRow, c SeedColumn, most map[string]int) []*seedCell {
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
			(t.MessageSize > 0 && messageSize(res) != float64(t.MessageSize)) {
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
		if t.Conn != "" && connectionsOf(res.Workload, res.Params).Style != t.Conn {
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
			sc = &seedCell{key: k, fig: f, rounds: map[int][]float64{}}
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
		if refRow.Step == nil && stepWithout(k.Step, "services=") != stepWithout(rk.Step, "services=") {
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
// with its interval when the rounds give one.
type seedMeasure struct {
	cell   *seedCell
	v      float64
	lo, hi float64
	hasCI  bool
	rounds int
}

// tested says m has an interval, or is the reference's exact 1.
func (m seedMeasure) tested() bool { return m.hasCI || m.cell.key.Network == "" }

func (m seedMeasure) overlaps(o seedMeasure) bool {
	lo1, hi1, lo2, hi2 := m.v, m.v, o.v, o.v
	if m.hasCI {
		lo1, hi1 = m.lo, m.hi
	}
	if o.hasCI {
		lo2, hi2 = o.lo, o.hi
	}
	return lo1 <= hi2 && lo2 <= hi1
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

func (t SeedTable) measure(c *seedCell, ref *seedCell, col SeedColumn) (seedMeasure, bool) {
	m := seedMeasure{cell: c}
	switch {
	case col.IsRatio || t.Form == Rank:
		vs := c.values() // raw: format displays them in the figure's unit
		m.v, m.rounds = stats.Median(vs), len(vs)
		if lo, hi, method := stats.Interval(vs, 0.95); method != stats.MethodNone {
			m.lo, m.hi, m.hasCI = lo, hi, true
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
	var cmp result.Comparison
	var ok bool
	if x, y, paired := pairByRound(c, ref); paired {
		cmp, ok = stats.Paired(x, y, c.fig.Better, stats.Default)
	} else {
		cmp, ok = stats.Unpaired(c.values(), ref.values(), c.fig.Better, stats.Default)
	}
	if !ok {
		return m, false
	}
	m.v, m.rounds = cmp.Ratio, cmp.N
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

// SeedColumnResult is one column: its rows and whether cnperf reproduces
// the study's order.
type SeedColumnResult struct {
	Column  SeedColumn
	Rows    []SeedRowResult
	Pairs   int // pairs the study orders that cnperf measured
	Agree   int
	Noise   int      // opposite order, within each other's intervals
	Against []string // opposite order, intervals apart
	// Untested are pairs in the opposite order where a side has no
	// interval (one round): not a tested contradiction.
	Untested []string
	Verdict  string
}

// SeedResult is a study table set beside one run.
type SeedResult struct {
	Table   SeedTable
	Columns []SeedColumnResult
	Missing []string // study rows the run has no cells for, with why
}

// Verdicts.
const (
	VerdictReproduces = "reproduces"
	VerdictNoise      = "reproduces within noise"
	VerdictNot        = "does not reproduce"
	VerdictUntested   = "opposite order, not tested (no interval: run --repeat 3)"
	VerdictNothing    = "nothing to order"
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
	var out []SeedResult
	for _, t := range SeedTables {
		sr := SeedResult{Table: t}
		measured := map[string]bool{}
		refRow, hasRef := t.refRow()
		for ci, col := range t.Columns {
			cr := SeedColumnResult{Column: col}
			var refs []*seedCell
			if hasRef {
				refs = t.match(run, refRow, col, most)
			}
			for _, row := range t.Rows {
				rr := SeedRowResult{Row: row}
				switch {
				case t.ratioForm():
					rr.Study = t.ratio(row, ci)
				default:
					rr.Study = seedRatio{v: at(row.Values, ci), lo: math.NaN(), hi: math.NaN()}
				}
				for _, c := range t.match(run, row, col, most) {
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

// order checks, for every pair of rows the study orders, whether cnperf's
// cells (of the same workload) come in the same order.
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
	for a := 0; a < len(items); a++ {
		for b := a + 1; b < len(items); b++ {
			x, y := items[a], items[b]
			if x.row == y.row || x.m.cell.key.Workload != y.m.cell.key.Workload {
				continue
			}
			sd := studyOrder(t.Form, x.study, y.study)
			if sd == 0 {
				continue
			}
			cd := 0
			switch {
			case x.m.v > y.m.v:
				cd = 1
			case x.m.v < y.m.v:
				cd = -1
			}
			if t.Form == Rank && x.m.cell.fig.Better != result.LowerBetter {
				cd = -cd // a larger value is a better (smaller) rank
			}
			cr.Pairs++
			pair := fmt.Sprintf("%s %s %s", cellName(x.m, cr.Rows[x.row].Row), map[bool]string{true: ">", false: "<"}[cd > 0], cellName(y.m, cr.Rows[y.row].Row))
			switch {
			case cd == sd:
				cr.Agree++
			case x.m.overlaps(y.m):
				cr.Noise++
			case !x.m.tested() || !y.m.tested():
				cr.Untested = append(cr.Untested, pair)
			default:
				cr.Against = append(cr.Against, pair)
			}
		}
	}
	switch {
	case cr.Pairs == 0:
		cr.Verdict = VerdictNothing
	case len(cr.Against) > 0:
		cr.Verdict = VerdictNot
	case len(cr.Untested) > 0:
		cr.Verdict = VerdictUntested
	case cr.Noise > 0:
		cr.Verdict = VerdictNoise
	default:
		cr.Verdict = VerdictReproduces
	}
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
	if m.hasCI {
		s += " [" + fmtRatio(m.lo) + ", " + fmtRatio(m.hi) + "]"
	}
	return s
}

// side says where a ratio sits against the reference: above, below, or
// within 5 % (≈); for a measure, ≈ when its interval holds 1.
func (s seedRatio) side() int {
	lo, hi := s.v, s.v
	if s.isRange() {
		lo, hi = s.lo, s.hi
	}
	switch {
	case !math.IsNaN(lo) && lo > 1.05:
		return 1
	case !math.IsNaN(hi) && hi < 1/1.05:
		return -1
	case !math.IsNaN(lo) && !math.IsNaN(hi) || !s.isRange():
		return 0
	}
	return 2 // open on both sides: no side
}

func (m seedMeasure) side() int {
	lo, hi := m.v, m.v
	if m.hasCI {
		lo, hi = m.lo, m.hi
	}
	switch {
	case lo > 1.05:
		return 1
	case hi < 1/1.05:
		return -1
	case lo <= 1 && hi >= 1 || m.v > 1/1.05 && m.v < 1.05:
		return 0
	}
	return 3 // neither: the interval straddles the 5 % band, not 1
}

// agreement says whether cnperf's ratio agrees with the study's for a
// row: within a published range, or on the same side of the reference.
func agreement(s seedRatio, m seedMeasure) string {
	if s.isRange() && !math.IsNaN(s.lo) && !math.IsNaN(s.hi) {
		switch {
		case m.v < s.lo:
			return "below the study's range"
		case m.v > s.hi:
			return "above the study's range"
		}
		return "within the study's range"
	}
	ss, ms := s.side(), m.side()
	switch {
	case ss == 2 || ms == 3:
		return "-"
	case ss == ms:
		return "same side of 1"
	case ms == 0:
		return "≈ 1 here (not significant)"
	}
	return "opposite side of 1"
}
