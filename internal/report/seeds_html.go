package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// seedSection sets the source studies' published tables beside the runs'
// figures for the same rows (CompareSeeds): a summary of which orderings
// reproduce, then each study table as its own part, with the study's
// numbers as printed, the ratios on both sides and a chart of them.
func seedSection(ins []Input) section {
	sec := section{ID: "studies", Title: "Against the studies",
		Intro: "The source studies' own numbers (seeds/*.txt, transcribed in internal/report/seeddata.go with where each was read) beside this run's for the same rows. The hardware differs, so only relative figures are compared: each row's ratio to the study's reference row, cnperf's the geometric mean of the per-round ratios with its 95 % interval. Every pair of rows the study orders (more than 5 % apart, or by rank) is compared here cell against cell, paired by round: shown in the study's order when it differs that way (p < 0.05, the interval clear of 1 ± 5 %). An ordering reproduces only when every pair is shown; same order, not shown when none goes against it but some are undecided; opposite, within noise when some come the other way without being shown to; does not reproduce only when a pair differs the other way. Each row's size: same size when the study's ratio lies inside cnperf's interval; otherwise how many times the study's cost (or gain) cnperf's shown change is."}
	overlay := len(ins) > 1
	summary := htmlTable{Head: []string{"study table", "source", "reproduced by", "pairs of rows the study orders", "shown in its order", "same order, not shown", "opposite, not shown", "shown opposite", "ordering", "per figure"}}
	for _, in := range ins {
		for _, sr := range CompareSeeds(in.Run) {
			t := sr.Table
			title := t.Title
			if overlay {
				title = in.Name + ": " + title
			}
			var n [5]int
			var per []string
			for _, cr := range sr.Columns {
				n[0] += cr.Pairs
				n[1] += len(cr.Shown)
				n[2] += len(cr.SameNotShown)
				n[3] += len(cr.OppositeNotShown)
				n[4] += len(cr.Against)
				if len(sr.Columns) > 1 {
					per = append(per, fmt.Sprintf("%s: %s (%d of %d shown)", cr.Column.Label, cr.Verdict, len(cr.Shown), cr.Pairs))
				}
			}
			summary.Rows = append(summary.Rows, []string{title, t.Source + ", " + t.ID, "cnperf run --suite " + t.Suite,
				strconv.Itoa(n[0]), strconv.Itoa(n[1]), strconv.Itoa(n[2]), strconv.Itoa(n[3]), strconv.Itoa(n[4]), overallVerdict(sr), strings.Join(per, "; ")})
			sec.Subs = append(sec.Subs, seedPart(in, overlay, sr))
		}
	}
	if len(sec.Subs) == 0 {
		return section{}
	}
	sec.Tables = append(sec.Tables, summary)
	return sec
}

// seedPart is one study table beside one run.
func seedPart(in Input, overlay bool, sr SeedResult) section {
	t := sr.Table
	p := section{ID: "study-" + t.ID, Title: t.Title}
	if overlay {
		p.Title = in.Name + ": " + p.Title
	}
	p.Intro = "Study: " + t.Source + ", " + t.Cite + ". Reproduced by cnperf run --suite " + t.Suite + "."
	if t.Note != "" {
		p.Intro += " " + t.Note
	}
	ref := t.Reference
	var head []string
	switch {
	case t.ratioForm():
		head = []string{"study row", "figure", "study, as published", "study: ratio to " + ref, "cnperf cell", "cnperf median", "cnperf: ratio to " + ref + " [95 %] (= equivalent, ? undecided, no mark: differs)", "rounds", "size against the study"}
	case t.Form == Difference:
		head = []string{"study row", "figure", "study: minus " + ref + " (" + t.Unit + ")", "cnperf cell", "cnperf median", "cnperf: minus " + ref + " [95 %]", "rounds"}
	default:
		head = []string{"study row", "figure", "study: rank (1 = best)", "cnperf cell", "cnperf median [95 %]", "cnperf rank", "rounds"}
	}
	tab := htmlTable{Caption: "The study's rows beside cnperf's cells for them", Head: head}
	c := chart{Kind: chartInterval, Title: shortTitle(t) + ": ratio to " + ref + ", study and cnperf", YLabel: "ratio to " + ref, YLog: true, Ref: fp(1), RefLabel: ref + " = 1"}
	for _, cr := range sr.Columns {
		ranks := cnperfRanks(t, cr)
		for _, rr := range cr.Rows {
			study := publishedText(t, rr, cr)
			if len(rr.Measures) == 0 {
				continue
			}
			for i, m := range rr.Measures {
				name, fig, pub, sr := rr.Row.Name, cr.Column.Label, study, rr.Study.String()
				if rr.Row.Outlier != "" {
					name += " (not ordered: " + rr.Row.Outlier + ")"
				}
				if i > 0 {
					name, fig, pub, sr = "", "", "", ""
				}
				cell := cellLabel(m.cell.key)
				if m.cell.key.Step != "" {
					cell += " (" + m.cell.key.Step + ")"
				}
				cell = m.cell.key.Workload + ": " + cell
				median := strings.TrimSpace(format(m.cell.fig, stats.Median(m.cell.values())) + " " + m.cell.fig.Unit)
				rounds := strconv.Itoa(m.rounds)
				switch {
				case t.ratioForm():
					agree := "-"
					if rr.Row.Name != ref {
						agree = agreement(rr.Study, m)
					}
					tab.Rows = append(tab.Rows, []string{name, fig, pub, sr, cell, median, m.ratioString(), rounds, agree})
				case t.Form == Difference:
					d := fmtSigned(m.v) + " " + m.cell.fig.Unit
					if m.hasCI {
						d += " [" + fmtSigned(m.lo) + ", " + fmtSigned(m.hi) + "]"
					}
					tab.Rows = append(tab.Rows, []string{name, fig, pub, cell, median, d, rounds})
				default:
					v := format(m.cell.fig, m.v) + " " + m.cell.fig.Unit
					if m.hasCI {
						v += " [" + format(m.cell.fig, m.lo) + ", " + format(m.cell.fig, m.hi) + "]"
					}
					tab.Rows = append(tab.Rows, []string{name, fig, pub, cell, v, ranks[m.cell], rounds})
				}
				if t.ratioForm() && rr.Row.Name != ref {
					cat := chartCategory(t, rr.Row, cr.Column, m.cell.key)
					s := rr.Study
					switch {
					case !s.isRange():
						addIntervalPoint(&c, "study (published)", cat, s.v, false, 0, 0)
					case !math.IsNaN(s.lo) && !math.IsNaN(s.hi):
						addIntervalPoint(&c, "study (published)", cat, math.Sqrt(s.lo*s.hi), true, s.lo, s.hi)
					}
					addIntervalPoint(&c, "cnperf (this run)", cat, m.v, m.hasCI, m.lo, m.hi)
				}
			}
		}
	}
	for i := range c.Series {
		if c.Series[i].Label == "study (published)" {
			c.Series[i].Band = "range (a bar: the study gives a range, its middle marked)"
		}
	}
	if !c.Empty() {
		p.Charts = append(p.Charts, c)
	}
	p.Tables = append(p.Tables, tab)
	for _, cr := range sr.Columns {
		p.Notes = append(p.Notes, orderingNote(cr))
	}
	if len(sr.Missing) > 0 {
		p.Notes = append(p.Notes, "Study rows without a cnperf cell here: "+strings.Join(sr.Missing, "; ")+".")
	}
	return p
}

// chartCategory names a cell on a study chart, short: the network (or
// the load balancer), then what tells it apart from the table's other
// cells: the study row it stands in for, its workload, placement and
// step, the column.
func chartCategory(t SeedTable, row SeedRow, col SeedColumn, k result.CellKey) string {
	s := k.Network
	if row.LB != "" {
		s = "lb=" + k.LB
	}
	if len(row.Networks) > 1 {
		s = row.Name + ": " + s
	}
	if len(t.Workloads) > 1 {
		s = k.Workload + " " + s
	}
	if t.Placement == "" && row.Placement == "" {
		s += " " + k.Placement
	}
	if row.Step != nil {
		s += " " + k.Step
	}
	if len(t.Columns) > 1 {
		s += " · " + col.Label
	}
	return s
}

// orderingNote says, for one figure, what cnperf shows of the study's
// order: how many pairs, which are shown, which not, and the verdict.
func orderingNote(cr SeedColumnResult) string {
	line := cr.Column.Label + ": "
	if cr.Pairs == 0 {
		return line + "the study orders no two of the rows measured here."
	}
	line += fmt.Sprintf("of %d pairs of rows the study orders, %d shown in its order here", cr.Pairs, len(cr.Shown))
	if f := cr.Family; f.Method == stats.HolmMethod && f.Size > 1 {
		line += fmt.Sprintf(" (after Holm's correction for the %d pairs; %d differ alone, %d after it)", f.Size, f.Before, f.After)
	}
	for _, l := range []struct {
		what  string
		pairs []string
	}{
		{"shown", cr.Shown},
		{"in its order, not shown", cr.SameNotShown},
		{"in the opposite order (or level), not shown", cr.OppositeNotShown},
		{"shown in the opposite order", cr.Against},
	} {
		if len(l.pairs) > 0 {
			line += fmt.Sprintf("; %s: %s", l.what, strings.Join(l.pairs, "; "))
		}
	}
	return line + ". The ordering: " + cr.Verdict + "."
}

// overallVerdict is a table's verdict over its figures: the worst of them
// (a contradiction shown, then an opposite order, then one not shown).
func overallVerdict(sr SeedResult) string {
	rank := map[string]int{VerdictNot: 5, VerdictOpposite: 4, VerdictOppositeUntested: 3, VerdictNotShown: 2, VerdictReproduces: 1, VerdictNothing: 0}
	v := VerdictNothing
	for _, cr := range sr.Columns {
		if rank[cr.Verdict] > rank[v] {
			v = cr.Verdict
		}
	}
	return v
}

// shortTitle is a table's title up to its first colon.
func shortTitle(t SeedTable) string {
	s, _, _ := strings.Cut(t.Title, ":")
	return t.ID + " " + s
}

// publishedText is a row's value as the study prints it.
func publishedText(t SeedTable, rr SeedRowResult, cr SeedColumnResult) string {
	i := 0
	for j, c := range t.Columns {
		if c.Label == cr.Column.Label {
			i = j
		}
	}
	v, lo, hi := at(rr.Row.Values, i), at(rr.Row.Lo, i), at(rr.Row.Hi, i)
	unit := " " + t.Unit
	if t.Unit == "%" || t.Unit == "x" {
		unit = t.Unit
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	var s string
	switch {
	case !math.IsNaN(v) && t.Form == Rank:
		s = num(v)
	case !math.IsNaN(v) && (t.Form == ChangePct || t.Form == RefGainPct):
		s = fmtSigned(v) + unit
	case !math.IsNaN(v):
		s = num(v) + unit
	case !math.IsNaN(lo) && !math.IsNaN(hi):
		s = num(lo) + " to " + num(hi) + unit
	case !math.IsNaN(lo):
		s = "above " + num(lo) + unit
	case !math.IsNaN(hi):
		s = "below " + num(hi) + unit
	default:
		s = "-"
	}
	if rr.Row.Approx != "" {
		s += " (from the text: " + rr.Row.Approx + ")"
	}
	return s
}

func fmtSigned(v float64) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if v > 0 {
		s = "+" + s
	}
	return s
}

// cnperfRanks ranks cnperf's cells of a Rank table, per workload, by their
// medians in the figure's direction (1 = best).
func cnperfRanks(t SeedTable, cr SeedColumnResult) map[*seedCell]string {
	out := map[*seedCell]string{}
	if t.Form != Rank {
		return out
	}
	type it struct {
		c *seedCell
		v float64
	}
	by := map[string][]it{}
	for _, rr := range cr.Rows {
		for _, m := range rr.Measures {
			by[m.cell.key.Workload] = append(by[m.cell.key.Workload], it{m.cell, m.v})
		}
	}
	for _, items := range by {
		for _, a := range items {
			r := 1
			for _, b := range items {
				if b.c != a.c && (a.c.fig.Better == result.LowerBetter && b.v < a.v || a.c.fig.Better != result.LowerBetter && b.v > a.v) {
					r++
				}
			}
			out[a.c] = strconv.Itoa(r)
		}
	}
	return out
}
