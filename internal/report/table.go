// Package report renders results. It reads only the result schema, so it
// works as well on a JSON file written by another cnperf run.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

type rowKey struct{ network, placement, lb, backend string }

// column is one declared figure of one workload.
type column struct {
	workload string
	title    string
	fig      result.Figure
}

// FiguresOf is workload.FiguresOf: what a workload or measurement
// reports, headline first.
func FiguresOf(name string) []result.Figure { return workload.FiguresOf(name) }

// value reads a figure of one result (the kit's Value: a saturated
// step's latency is absent, the saturated flag reads as its cause).
func value(f result.Figure, m result.Metrics) (float64, bool) { return kit.Value(f, m) }

// format prints a figure's value in its unit (the kit's Format).
func format(f result.Figure, v float64) string { return kit.Format(f, v) }

// mark suffixes a latency percentile with "*" when too few samples back it.
func mark(f result.Figure, m result.Metrics) string {
	if f.Kind != result.KindLatency {
		return ""
	}
	if q, ok := strings.CutPrefix(f.Key, "latency_us."); ok && m.Extra[result.ExtraInsignificant(q)] == 1 {
		return "*"
	}
	return ""
}

func count(v float64) string { return kit.Count(v) }
func usec(v float64) string  { return fmt.Sprintf("%.1f", v) }

// columnsFor lays out a workload's declared figures; the first is titled
// with the workload's name. A CPU cost shows only where the run measured it.
func columnsFor(wl string, results []result.Result) []column {
	var cs []column
	for i, f := range FiguresOf(wl) {
		if f.Kind == result.KindCost && !measured(results, wl, f) {
			continue
		}
		title := f.Label
		if i == 0 {
			title = wl + " " + f.Label
		}
		cs = append(cs, column{workload: wl, title: title, fig: f})
	}
	return cs
}

func measured(results []result.Result, wl string, f result.Figure) bool {
	for _, r := range results {
		if _, ok := r.Metrics.Value(f.Key); ok && r.Workload == wl {
			return true
		}
	}
	return false
}

// Table writes a row per network and placement, a column per figure each
// workload declares, each main figure followed by its ratio to the baseline
// in the same placement. Steps of multi-step workloads (a rate ladder, a
// size sweep) get a table each. Repeated measurements are averaged, n>1
// adding the spread; a run with Summaries (interleaved rounds) shows each
// figure's median and the paired ratio with its interval and its
// verdict's mark, and a legend naming the estimator, the test and what
// would decide the undecided ratios.
func Table(w io.Writer, run *result.Run) {
	if run.Incomplete {
		fmt.Fprintln(w, Incomplete(run))
	}
	var steps []string
	byStep := map[string][]result.Result{}
	for _, r := range run.Results {
		if _, ok := byStep[r.Step]; !ok {
			steps = append(steps, r.Step)
		}
		byStep[r.Step] = append(byStep[r.Step], r)
	}
	run, fam, demoted := Corrected(run)
	sums := indexSummaries(run.Summaries)
	slow := stats.MinorityRounds(run)
	searchSteps, meanRatios := 0, false
	for i, st := range steps {
		if searchStep(st) {
			searchSteps++
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if st != "" {
			fmt.Fprintf(w, "== %s ==\n", st)
		}
		meanRatios = table(w, byStep[st], sums, slow) || meanRatios
	}
	if searchSteps > 0 {
		fmt.Fprintf(w, "(%d steps of the max-rate search are in the JSON, not shown)\n", searchSteps)
	}
	if anySaturated(run) {
		fmt.Fprintln(w, SaturationNote)
	}
	for _, s := range kit.Texts() { // services, replicas, sizes, flows... in their rank order
		s.Text(w, run)
	}
	for _, s := range run.Skipped {
		what := s.Network
		if s.Placement != "" {
			what += " " + s.Placement
		}
		fmt.Fprintf(w, "skipped %s: %s\n", what, s.Reason)
	}
	if len(sums) > 0 {
		legend(w, run, meanRatios, familyLine(fam, demoted))
	} else {
		fmt.Fprintln(w, "(x) is the ratio of the mean to the baseline's in the same placement, with no rounds to pair and no test:")
		fmt.Fprintln(w, "every ratio is ? undecided; "+aboveOne(ratioFigures(run))+".")
	}
	// last, where a reader finishing the page sees them
	for _, m := range run.Warnings {
		fmt.Fprintln(w, "warning: "+m)
	}
}

// Incomplete is the one line that says a run file is of a run cut short
// (or still going), and how much of it there is.
func Incomplete(run *result.Run) string {
	done := fmt.Sprintf("%d results recorded", len(run.Results))
	if run.CellsPlanned > 0 {
		if run.CellsDone >= run.CellsPlanned {
			// every cell finished; the run failed after them (a teardown)
			return fmt.Sprintf("all %d cells finished, but the run ended with an error after them (its teardown): the numbers are complete", run.CellsPlanned)
		}
		done = fmt.Sprintf("%d of %d cells finished", run.CellsDone, run.CellsPlanned)
	}
	return "incomplete run: " + done + " (cut short or still going); the cells not shown were not measured"
}

// sumKey finds the summary of one figure of one cell.
type sumKey struct {
	cell   result.CellKey
	figure string
}

func indexSummaries(ss []result.Summary) map[sumKey]result.Summary {
	if len(ss) == 0 {
		return nil
	}
	m := map[sumKey]result.Summary{}
	for _, s := range ss {
		m[sumKey{s.Cell, s.Figure}] = s
	}
	return m
}

// legend explains a table of medians: what the ratio and its interval
// are, what each verdict's mark means, and for the undecided ratios how
// many rounds would decide them, from the run's own comparisons.
// meanRatios: some cells had no summary and show a "(?x)" ratio of
// means (issue 34: a run cut short printed "no (x) ratio" right below
// one). family is the line on the family's correction ("" for none).
func legend(w io.Writer, run *result.Run, meanRatios bool, family string) {
	if meanRatios {
		defer fmt.Fprintln(w, "(?x) after a figure without an interval: the ratio of the cell's mean to the baseline's, for a cell with no\nsummary (the run was cut short): no rounds paired, no test, ? undecided.")
	}
	n, level := run.Rounds, 0.0
	var c *result.Comparison
	for _, s := range run.Summaries {
		n = max(n, s.N)
		if level == 0 {
			level = s.CILevel
		}
		if c == nil && s.VsBaseline != nil && s.VsBaseline.CILevel > 0 {
			c = s.VsBaseline
		}
	}
	if level == 0 {
		level = 0.95
	}
	if n >= 2 && c == nil {
		// rounds, but no cell with a baseline to pair with: no (x) at all
		if meanRatios {
			fmt.Fprintf(w, "figures are medians over %d rounds; no summarised cell has a baseline in its placement to be paired with.\n", n)
		} else {
			fmt.Fprintf(w, "figures are medians over %d rounds; no cell has a baseline in its placement to be paired with, so no (x) ratio.\n", n)
		}
		noise(w, run)
		return
	}
	if n < 2 || c == nil {
		fmt.Fprintln(w, "one round: (x) is the ratio to baseline in the same placement (cell ÷ baseline in that round), with no")
		fmt.Fprintln(w, "interval and no test, so every ratio is ? undecided (run --repeat 3 or more for intervals and verdicts).")
		noise(w, run)
		return
	}
	e := 100 * c.MinEffect
	sums := indexSummaries(run.Summaries)
	var repaired []string
	for _, s := range printedRatios(run) {
		k, m, ok := kit.Repaired(*s.VsBaseline)
		how := "re-paired by speed"
		if !ok {
			k, m, ok = dropped(s, sums)
			how = "the rounds one of the two cells failed in left out"
		}
		if ok {
			repaired = append(repaired, fmt.Sprintf("%s %s %d of %d rounds, %s", stats.CellName(s.Cell), summaryLabel(s), k, m, how))
		}
	}
	fmt.Fprintf(w, "figures are medians over %d rounds. (x) is the paired ratio to baseline in the same placement: the geometric\n", n)
	if len(repaired) > 0 {
		fmt.Fprintln(w, "mean of the per-round ratios (cell ÷ baseline of the same round, except where ‡ says otherwise), not the quotient")
		fmt.Fprintln(w, "of the two medians shown;")
	} else {
		fmt.Fprintln(w, "mean of the per-round ratios (cell ÷ baseline of the same round), not the quotient of the two medians shown;")
	}
	fmt.Fprintf(w, "[lo, hi] is its %g%% interval (%s); %s.\n", 100*level, c.Test, aboveOne(ratioFigures(run)))
	fmt.Fprintf(w, "verdicts (p<%g, minimum effect %g %%): no mark = differs (the interval clear of [%.2f, %.2f]); = equivalent\n", c.Alpha, e, 1-c.MinEffect, 1+c.MinEffect)
	fmt.Fprintf(w, "(the whole interval inside [%.2f, %.2f]); ? undecided: neither a difference nor an equivalence is shown.\n", 1-c.MinEffect, 1+c.MinEffect)
	if family != "" {
		fmt.Fprintln(w, family)
	}
	if d := toDecide(run); d != "" {
		fmt.Fprintln(w, "? more rounds would decide (--repeat N); at the spread seen, about: "+d)
	}
	if len(repaired) > 0 {
		fmt.Fprintf(w, "%sk/n: the ratio rests on k of the n rounds, not on each round paired with its own: re-paired by speed (a round whose two cells ran at different machine speeds paired with another round of the reference's at the same speed, or left out; the JSON's speed note says which), or rounds a cell failed in left out: %s\n",
			MarkRepaired, strings.Join(repaired, "; "))
	}
	noise(w, run)
}

// ratioFigures are the figures the table prints a ratio beside: each
// workload's figures marked Ratio, in the order of the results.
func ratioFigures(run *result.Run) []column {
	var cs []column
	seen := map[string]bool{}
	for _, r := range run.Results {
		if seen[r.Workload] || searchStep(r.Step) {
			continue
		}
		seen[r.Workload] = true
		for _, f := range FiguresOf(r.Workload) {
			if f.Ratio {
				cs = append(cs, column{workload: r.Workload, title: r.Workload + " " + f.Label, fig: f})
			}
		}
	}
	return cs
}

// aboveOne says, per direction, what a ratio above 1 means for the
// columns it names (the kit's AboveOne).
func aboveOne(cs []column) string {
	var titles []string
	var figs []result.Figure
	for _, c := range cs {
		titles, figs = append(titles, c.title), append(figs, c.fig)
	}
	return kit.AboveOne(titles, figs)
}

// toDecide lists the undecided ratios the table prints, each with the
// rounds that would decide it at the spread seen.
func toDecide(run *result.Run) string {
	var parts []string
	for _, s := range run.Summaries {
		c := s.VsBaseline
		if c == nil || c.CILevel == 0 || stats.VerdictOf(*c) != stats.Undecided {
			continue
		}
		f, ok := kit.FigureOf(s.Cell.Workload, s.Figure)
		if !ok || !f.Ratio || searchStep(s.Cell.Step) {
			continue
		}
		if c.Speed != nil && c.Speed.Method == result.SpeedUnmatched {
			continue // its problem is the machine's speed, not rounds (the † line)
		}
		if stats.PEffect(*c) < c.Alpha {
			continue // differs alone, not after the family's correction (the family line)
		}
		k := "more than 1000"
		if c.RoundsNeeded > 0 {
			k = strconv.Itoa(c.RoundsNeeded)
		}
		name := s.Cell.Network + " " + s.Cell.Placement + " " + s.Cell.Workload
		if s.Cell.LB != "" {
			name += " lb=" + s.Cell.LB
		}
		if s.Cell.Step != "" {
			name += " " + s.Cell.Step
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", name, f.Label, k))
	}
	return strings.Join(parts, ", ")
}

// noise prints how much the reference cells' rates moved between rounds
// (their coefficient of variation, and its upper confidence bound): the
// reader's measure of the machine's noise, which the run warns about when
// the bound is above stats.NoisyCV.
func noise(w io.Writer, run *result.Run) {
	defer speedLegend(w, run)
	var parts []string
	whose := "baseline's"
	for _, s := range stats.NoiseSummaries(run.Summaries, FiguresOf) {
		// the step too: a sweep's reference cells differ only by it
		cell := s.Cell.Workload + " " + s.Cell.Placement
		if s.Cell.Backend != "" { // the lab's and a backend's baselines differ only by it
			cell = s.Cell.Backend + ": " + cell
		}
		if _, ref := stats.Reference(s.Cell); ref {
			// no reference cell in the run: every cell's, named
			whose, cell = "the cells'", s.Cell.Network+" "+cell
		}
		if s.Cell.Step != "" {
			cell += " " + s.Cell.Step
		}
		parts = append(parts, fmt.Sprintf("%s %s %.1f%% (≤%.0f%%)", cell, summaryLabel(s), 100*s.CV, 100*stats.CVUpper(s.CV, s.N, stats.CVLevel)))
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "noise: %s spread between rounds (CV, and its %g%% upper bound): %s (warned when a bound is above %g%%)\n", whose, 100*stats.CVLevel, strings.Join(parts, ", "), 100*stats.NoisyCV)
}

// summaryLabel is the label of a summary's figure ("trans/s").
func summaryLabel(s result.Summary) string {
	for _, f := range FiguresOf(s.Cell.Workload) {
		if f.Key == s.Figure {
			return f.Label
		}
	}
	return s.Figure
}

// ratio prints a comparison with its verdict's mark and its interval
// (the kit's Ratio).
func ratio(c result.Comparison) string { return kit.Ratio(c) }

// The table's marks of the machine's speed (stats.Speeds).
const (
	// MarkMinoritySpeed follows a figure some of whose rounds ran while
	// the machine was at the speed fewer cells ran at.
	MarkMinoritySpeed = kit.MarkMinoritySpeed
	// MarkSpeedsDiffer follows a ratio whose rounds ran the two cells at
	// different speeds, with too few same-speed pairs to use instead.
	MarkSpeedsDiffer = kit.MarkSpeedsDiffer
)

// speedLegend explains the marks a table of run uses, and names the
// machine's speeds.
func speedLegend(w io.Writer, run *result.Run) {
	notes := stats.SpeedNotes(run)
	if len(notes) == 0 {
		return
	}
	fmt.Fprintln(w, "noise: "+notes[0])
	if stats.Minority(run) != "" {
		fmt.Fprintf(w, "%s: some rounds of this figure ran at the minority speed; a ratio pairs only samples of one speed where it can\n", MarkMinoritySpeed)
	}
	var mixed []string
	for _, s := range printedRatios(run) {
		if c := s.VsBaseline; c.Speed != nil && c.Speed.Method == result.SpeedUnmatched {
			mixed = append(mixed, stats.CellName(s.Cell)+" "+summaryLabel(s))
		}
	}
	if len(mixed) > 0 {
		fmt.Fprintf(w, "%s: too few rounds ran both cells at one speed, so the ratio mixes the machine's speeds and stays ? undecided: more rounds at mixed speeds would not decide it, rounds at one speed would (a quiet machine, --pin): %s\n", MarkSpeedsDiffer, strings.Join(mixed, ", "))
	}
}

// MarkRepaired follows a ratio that does not pair each round with its
// own round, with how many rounds it rests on (‡3/5).
const MarkRepaired = kit.MarkRepaired

// tableRatio is a summary's ratio to its reference as the table prints it:
// the kit's Ratio, and MarkRepaired with its count where the ratio rests
// on fewer rounds than the two cells ran (re-paired by speed, or rounds
// one of them failed in left out).
func tableRatio(s result.Summary, sums map[sumKey]result.Summary) string {
	c := *s.VsBaseline
	out := ratio(c)
	if k, n, ok := dropped(s, sums); ok {
		i := strings.Index(out, "x")
		out = out[:i+1] + fmt.Sprintf("%s%d/%d", MarkRepaired, k, n) + out[i+1:]
	}
	return out
}

// dropped says whether a paired ratio, paired by round, rests on fewer
// rounds (k) than its cell or its reference has (n): rounds one of them
// failed in. A ratio re-paired by speed carries its own count (the kit's
// Repaired).
func dropped(s result.Summary, sums map[sumKey]result.Summary) (k, n int, ok bool) {
	c := s.VsBaseline
	if c == nil || c.Estimator != stats.EstPaired || c.CILevel <= 0 {
		return 0, 0, false
	}
	if _, _, speed := kit.Repaired(*c); speed {
		return 0, 0, false
	}
	n = s.N
	if r, found := sums[sumKey{c.Against, s.Figure}]; found {
		n = max(n, r.N)
	}
	return c.N, n, c.N < n
}

// printedRatios are the summaries whose ratio the table prints: a figure
// with a ratio, a reference to compare with, not a max-rate search's step.
func printedRatios(run *result.Run) []result.Summary {
	var out []result.Summary
	for _, s := range run.Summaries {
		if s.VsBaseline == nil || searchStep(s.Cell.Step) {
			continue
		}
		if f, ok := kit.FigureOf(s.Cell.Workload, s.Figure); ok && f.Ratio {
			out = append(out, s)
		}
	}
	return out
}

// verdictMark is the mark a printed comparison carries (the kit's).
func verdictMark(c result.Comparison) string { return kit.VerdictMark(c) }

// table prints one table of results; it reports whether a cell without
// a summary got a "(?x)" ratio of means (a run cut short: the legend must
// say what that ratio is).
func table(w io.Writer, results []result.Result, sums map[sumKey]result.Summary, slow map[result.CellKey]int) (meanRatios bool) {
	var keys []rowKey
	seen := map[rowKey]bool{}
	var workloads []string
	wseen := map[string]bool{}
	vals := map[rowKey]map[string][]result.Metrics{}
	cells := map[rowKey]map[string]result.CellKey{}
	errs := map[rowKey]map[string]string{}
	for _, r := range results {
		k := rowKey{r.Network, r.Placement, r.LB, r.Backend}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
			vals[k] = map[string][]result.Metrics{}
			cells[k] = map[string]result.CellKey{}
			errs[k] = map[string]string{}
		}
		if !wseen[r.Workload] {
			wseen[r.Workload] = true
			workloads = append(workloads, r.Workload)
		}
		if _, ok := cells[k][r.Workload]; !ok {
			cells[k][r.Workload] = r.Key()
		}
		if r.Error != "" {
			errs[k][r.Workload] = r.Error
			continue
		}
		vals[k][r.Workload] = append(vals[k][r.Workload], r.Metrics)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		return placementOrder(keys[i].placement) < placementOrder(keys[j].placement)
	})
	var cols []column
	for _, wl := range workloads {
		cols = append(cols, columnsFor(wl, results)...)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"network", "placement"}
	for _, c := range cols {
		head = append(head, c.title)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var notes []string
	for _, k := range keys {
		row := []string{k.network, k.placement}
		if k.lb != "" {
			row[0] += " lb=" + k.lb
		}
		if k.backend != "" {
			row[0] = k.backend + ":" + row[0]
		}
		base := rowKey{result.BaselineNetwork, k.placement, "", k.backend}
		for _, c := range cols {
			ms := vals[k][c.workload]
			if e := errs[k][c.workload]; e != "" && len(ms) == 0 {
				row = append(row, "error")
				notes = append(notes, fmt.Sprintf("%s %s %s: %s", k.network, k.placement, c.workload, e))
				errs[k][c.workload] = "" // note once
				continue
			}
			if s, ok := sums[sumKey{cells[k][c.workload], c.fig.Key}]; ok && s.N > 0 {
				cell := format(c.fig, s.Median)
				if len(ms) > 0 {
					cell += mark(c.fig, ms[0])
				}
				if slow[cells[k][c.workload]] > 0 {
					cell += MarkMinoritySpeed
				}
				if c.fig.Ratio && s.VsBaseline != nil {
					cell += " (" + tableRatio(s, sums) + ")"
				}
				row = append(row, cell)
				continue
			}
			get := func(m result.Metrics) (float64, bool) { return value(c.fig, m) }
			v, sd, n, ok := mean(ms, get)
			if !ok {
				row = append(row, "-")
				continue
			}
			cell := format(c.fig, v) + mark(c.fig, ms[0])
			if n > 1 {
				cell += fmt.Sprintf("±%.0f%%", 100*sd/math.Max(v, 1e-12))
			}
			if c.fig.Ratio && k != base {
				if b, _, _, ok := mean(vals[base][c.workload], get); ok && b > 0 {
					cell += fmt.Sprintf(" (?%.2fx)", v/b) // no rounds: no test
					meanRatios = true
				}
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, "error: "+n)
	}
	return meanRatios
}

// replicas prints every comparison of a real backend's cell with the
// lab's replica of the same network, measured side by side in the run.
func replicas(w io.Writer, run *result.Run) {
	var lines []string
	for _, s := range run.Summaries {
		c := s.VsReplica
		if c == nil {
			continue
		}
		label := s.Figure
		for _, f := range FiguresOf(s.Cell.Workload) {
			if f.Key == s.Figure && f.Label != "" {
				label = f.Label
			}
		}
		where := ""
		if c.Against.Placement != s.Cell.Placement {
			where = " (lab " + c.Against.Placement + ")"
		}
		wl := s.Cell.Workload
		if s.Cell.LB != "" { // a service cell: which proxy, which count, against which replica
			wl += " lb=" + s.Cell.LB
			if c.Against.Network != s.Cell.Network || c.Against.LB != s.Cell.LB {
				where = " (lab " + c.Against.Network + " lb=" + c.Against.LB + ")"
			}
		} else if c.Against.Network != s.Cell.Network { // a pod network against the lab's replica of it
			where = " (lab " + c.Against.Network + ")"
		}
		if s.Cell.Step != "" { // the message size, the service count: two lines must not look alike
			wl += " " + s.Cell.Step
		}
		lines = append(lines, fmt.Sprintf("%s:%s\t%s\t%s\t%s\t%s%s", s.Cell.Backend, s.Cell.Network, s.Cell.Placement, wl, label, ratio(*c), where))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nreal / replica (the lab's same network, or the replica a line names; interleaved in this run; the geometric mean of the per-round ratios; marks as in the table):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
}

func placementOrder(p string) int { return kit.PlacementOrder(p) }

func mean(ms []result.Metrics, get func(result.Metrics) (float64, bool)) (avg, sd float64, n int, ok bool) {
	var sum, sq float64
	for _, m := range ms {
		if v, ok := get(m); ok {
			sum += v
			sq += v * v
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	avg = sum / float64(n)
	if n > 1 {
		sd = math.Sqrt(math.Max(0, (sq-float64(n)*avg*avg)/float64(n-1)))
	}
	return avg, sd, n, true
}

// anySaturated says whether a tabled load step did not hold its rate.
func anySaturated(run *result.Run) bool {
	for _, r := range run.Results {
		if v, _ := saturation(r.Metrics); v != satNo && !searchStep(r.Step) {
			return true
		}
	}
	return false
}
