package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// Answer is the page's summary of runs: one sentence per workload (and
// step) and placement, from the verdicts of the main figure's ratios to
// the baseline only. A network is called the fastest (or the quickest to
// start) only where its comparison with every other network of the
// placement differs in its favour; a cost is stated only where its
// ratio differs from 1, with its 95 % interval; an equivalent ratio is
// "equivalent to the baseline", an undecided one is named undecided.
func Answer(ins []Input) []string {
	var out []string
	for _, in := range ins {
		prefix := ""
		if len(ins) > 1 {
			prefix = in.Name + ": "
		}
		for _, s := range answerRun(in.Run) {
			out = append(out, prefix+s)
		}
	}
	return out
}

// answerCell is one network's ratio in a sentence.
type answerCell struct {
	key result.CellKey
	cmp result.Comparison
}

func answerRun(run *result.Run) []string {
	type group struct {
		workload, step, placement, figure string
	}
	var groups []group
	cells := map[group][]answerCell{}
	figs := map[group]result.Figure{}
	for _, s := range kit.Summaries(run) {
		k := s.Cell
		if k.LB != "" || searchStep(k.Step) || s.VsBaseline == nil {
			continue
		}
		f, ok := kit.FigureOf(k.Workload, s.Figure)
		if !ok || !f.Ratio {
			continue
		}
		g := group{k.Workload, k.Step, k.Placement, s.Figure}
		if _, seen := cells[g]; !seen {
			groups = append(groups, g)
		}
		cells[g] = append(cells[g], answerCell{k, *s.VsBaseline})
		figs[g] = f
	}
	var out []string
	for _, g := range groups {
		f := figs[g]
		what := g.workload
		if g.step != "" {
			what += " (" + g.step + ")"
		}
		head := fmt.Sprintf("%s %s, %s:", what, g.placement, f.Label)
		var parts []string
		if best := shownBest(run, cells[g], f); best != "" {
			parts = append(parts, fmt.Sprintf("%s is the %s network here (its %s differs from every other's in its favour)", best, bestWord(f), f.Label))
		} else if len(cells[g]) > 1 {
			parts = append(parts, fmt.Sprintf("no network is shown the %s", bestWord(f)))
		}
		var equiv, undecided []string
		for _, c := range cells[g] {
			switch stats.VerdictOf(c.cmp) {
			case stats.Differs:
				parts = append(parts, c.key.Network+" "+effect(f, c.cmp))
			case stats.Equivalent:
				equiv = append(equiv, c.key.Network)
			default:
				undecided = append(undecided, c.key.Network)
			}
		}
		if len(equiv) > 0 {
			parts = append(parts, strings.Join(equiv, ", ")+" "+plural(len(equiv), "is", "are")+" equivalent to the baseline (within ±5 %)")
		}
		if len(undecided) > 0 {
			parts = append(parts, "undecided: "+strings.Join(undecided, ", "))
		}
		out = append(out, head+" "+strings.Join(parts, "; ")+".")
	}
	return out
}

// effect is what a differing ratio says, in the figure's direction:
// "loses 49 % of the baseline's trans/s [35, 60]", "takes 38 % longer
// than the baseline [11, 59]".
func effect(f result.Figure, c result.Comparison) string {
	lo, hi := c.CILow, c.CIHigh
	pct := func(v float64) float64 { return math.Round(100 * v) }
	iv := func(a, b float64) string {
		if c.CILevel == 0 {
			return ""
		}
		return fmt.Sprintf(" [%.0f, %.0f]", pct(min(a, b)), pct(max(a, b)))
	}
	switch {
	case f.Better == result.HigherBetter && c.Ratio < 1:
		return fmt.Sprintf("loses %.0f %% of the baseline's %s%s", pct(1-c.Ratio), f.Label, iv(1-hi, 1-lo))
	case f.Better == result.HigherBetter:
		return fmt.Sprintf("has %.0f %% more %s than the baseline%s", pct(c.Ratio-1), f.Label, iv(lo-1, hi-1))
	case c.Ratio > 1:
		return fmt.Sprintf("takes %.0f %% longer than the baseline%s", pct(c.Ratio-1), iv(lo-1, hi-1))
	}
	return fmt.Sprintf("takes %.0f %% less time than the baseline%s", pct(1-c.Ratio), iv(1-hi, 1-lo))
}

// shownBest is the network whose figure differs from every other
// network's of the group in its favour (paired by round, as the verdicts
// are), the baseline left out; "" when none is shown.
func shownBest(run *result.Run, cells []answerCell, f result.Figure) string {
	var nets []answerCell
	for _, c := range cells {
		if c.key.Network != result.BaselineNetwork {
			nets = append(nets, c)
		}
	}
	if len(nets) < 2 {
		return ""
	}
	for _, a := range nets {
		wins := true
		for _, b := range nets {
			if a.key == b.key {
				continue
			}
			c, ok := stats.CompareCells(run.Results, a.key, b.key, f, stats.Default)
			if !ok || stats.VerdictOf(c) != stats.Differs || c.Direction != "better" {
				wins = false
				break
			}
		}
		if wins {
			return a.key.Network
		}
	}
	return ""
}

func bestWord(f result.Figure) string {
	if f.Better == result.LowerBetter && f.Kind == result.KindTime {
		return "quickest"
	}
	return "fastest"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
