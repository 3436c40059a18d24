package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// CompareUsage is `cnperf compare`'s.
const CompareUsage = `usage: cnperf compare OLD.json NEW.json [--fail-on-regression PCT [--allow-undecided] [--junit FILE]] [--json FILE]

Compares two results files written by cnperf run, cell by cell (network,
placement, workload): for each headline figure, NEW against OLD as the ratio
of their geometric means over every round (not the quotient of the medians
printed beside it), its 95 % interval (Welch's t on the logarithms) and a
verdict: differs (p < 0.05 and the whole interval beyond 1 ± 5 %: better or
worse), equivalent (the whole interval within 1 ± 5 %) or undecided (neither
shown; runs of one round are always undecided: rerun with --repeat N).
Cells measured in one file only are listed as such.

--fail-on-regression PCT is a gate for CI. It judges every figure with a
direction by its interval: a regression when the whole interval is worse
than PCT (higher is better: its upper end below 1-PCT/100; lower is better:
its lower end above 1+PCT/100), a pass when its worse end is within PCT,
undecided otherwise (no interval, an interval reaching past the limit, a
cell the new run did not measure or that failed in all its rounds). A
noisy- or busy-machine warning of either run makes the gate undecided too.
A gate that compared nothing (no cell and figure measured in both runs)
fails closed. Exit status: 0 every change passed; 3 a regression (whatever
else); 5 the gate could not decide (some change undecided, or a run warned),
unless --allow-undecided, or it compared nothing (even with
--allow-undecided); 2 bad usage; 1 a file could not be read.

flags:
`

// CompareOptions are compare's: the gate's limit (a fraction; below 0
// no gate), whether undecided changes pass it, and the --junit and
// --json files ("" for none).
type CompareOptions struct {
	Limit          float64
	AllowUndecided bool
	JUnit, JSON    string
}

// ParseCompareOptions checks compare's flags before any work: the gate's
// limit (--fail-on-regression PCT, "" for no gate), the flags that go
// with it, and the files it writes (a bad path found after the comparison
// is printed would fail a CI job whose gate passed).
//
// inputs are the files compared: the output rule (package cli) keeps the
// outputs off them, off each other and off files of other kinds (unless
// force).
func ParseCompareOptions(failOn string, allowUndecided bool, junit, jsonOut string, inputs []string, force bool) (CompareOptions, error) {
	o := CompareOptions{Limit: -1, AllowUndecided: allowUndecided, JUnit: junit, JSON: jsonOut}
	if failOn != "" {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(failOn), "%"), 64)
		if err != nil || math.IsNaN(pct) || pct < 0 || pct >= 100 {
			return o, fmt.Errorf("--fail-on-regression %q: want a percentage from 0 to below 100, e.g. --fail-on-regression 10", failOn)
		}
		o.Limit = pct / 100
	}
	if o.Limit < 0 && (junit != "" || allowUndecided) {
		return o, errors.New("--junit and --allow-undecided go with --fail-on-regression PCT, the limit the gate judges against: add e.g. --fail-on-regression 10")
	}
	return o, cli.CheckOutputs(inputs, force,
		cli.Output{Flag: "--json", Path: jsonOut, Example: "compare.json", Kind: CompareKind},
		cli.Output{Flag: "--junit", Path: junit, Example: "gate.xml", Kind: JUnitKind})
}

// Compare compares two results files cell by cell and writes the
// comparison on w; with a gate (Limit >= 0) its outcome is the error: a
// regression wraps exitcode.Regression, an undecided gate
// exitcode.Undecided.
func Compare(w io.Writer, oldPath, newPath string, o CompareOptions) error {
	files := []string{oldPath, newPath}
	limit := o.Limit
	var runs [2]*result.Run
	for i, f := range files {
		r, err := readRun(f)
		if err != nil {
			return err
		}
		// today's estimator, verdicts and warnings, whatever cnperf wrote the file
		stats.Summarize(r, FiguresOf)
		runs[i] = r
	}
	rc := stats.CompareRuns(runs[0], runs[1], FiguresOf, stats.Default)
	rc.Old, rc.New = files[0], files[1]
	var judged []stats.Judgement
	if limit >= 0 {
		for _, j := range rc.Gate(limit) {
			// a max-rate search's steps ran at rates of their own per run:
			// the ladder after them is what compares
			if !SearchStep(j.Cell.Step) {
				judged = append(judged, j)
			}
		}
	}
	if limit >= 0 {
		if judged == nil {
			judged = []stats.Judgement{} // a gate, that judged nothing
		}
		rc.GateLimit, rc.Judged = limit, judged
	}
	PrintComparison(w, rc, runs[0], runs[1], judged)
	if o.JSON != "" {
		b, err := json.MarshalIndent(rc, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the comparison: %v", err)
		}
		if err := cli.WriteBytes("--json", o.JSON, append(b, '\n')); err != nil {
			return err
		}
	}
	if limit < 0 {
		return nil
	}
	if o.JUnit != "" {
		if err := writeJUnit(o.JUnit, rc, judged, limit, o.AllowUndecided); err != nil {
			return err
		}
	}
	return gateError(rc, judged, limit, o.AllowUndecided)
}

// gateError is the gate's outcome as compare's error: a regression (exit
// 3), else undecided changes or a machine warning (exit 5) unless allowed.
func gateError(rc *stats.RunComparison, judged []stats.Judgement, limit float64, allowUndecided bool) error {
	var bad, open []string
	undecided := 0
	for _, j := range judged {
		switch j.Verdict {
		case stats.GateRegression:
			bad = append(bad, judgedName(j)+" "+j.Why)
		case stats.GateUndecided:
			undecided++
			if name := stats.CellName(j.Cell); !slices.Contains(open, name) {
				open = append(open, name)
			}
		}
	}
	pct := strconv.FormatFloat(limit*100, 'g', -1, 64)
	if stats.Compared(judged) == 0 {
		// fail closed: a gate that compared nothing must not pass a CI job
		return fmt.Errorf("the gate at %s %% compared nothing: %s; check both files hold the same cells, measured (%w)", pct, NothingCompared(rc), exitcode.Undecided)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d regression(s) beyond %s %%: %s (%w)", len(bad), pct, strings.Join(bad, "; "), exitcode.Regression)
	}
	if allowUndecided {
		return nil
	}
	var why []string
	if len(open) > 0 {
		why = append(why, fmt.Sprintf("%d change(s) undecided or untested, in %d cell(s): %s", undecided, len(open), strings.Join(open, "; ")))
	}
	if w := rc.MachineWarnings(); len(w) > 0 {
		var runs []string
		for _, x := range w {
			which, _, _ := strings.Cut(x, ":")
			if !slices.Contains(runs, which) {
				runs = append(runs, which)
			}
		}
		why = append(why, "a noisy or busy machine ("+strings.Join(runs, ", ")+" warned)")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("the gate at %s %% could not decide: %s; rerun both with more rounds (--repeat 5) on a quiet machine, or pass --allow-undecided (%w)",
		pct, strings.Join(why, "; "), exitcode.Undecided)
}

// NothingCompared says why a gate judged no figure of any cell.
func NothingCompared(rc *stats.RunComparison) string {
	return fmt.Sprintf("no cell and figure with a direction was measured in both runs (%d cells only in the old run, %d only in the new, %d failed in every round of the new run, %d of the old)",
		len(rc.OnlyOld), len(rc.OnlyNew), len(rc.FailedNew), len(rc.FailedOld))
}

// judgedName names a judged cell and figure for people.
func judgedName(j stats.Judgement) string {
	if j.Figure == "" {
		return stats.CellName(j.Cell)
	}
	return stats.CellName(j.Cell) + " " + figureLabel(j.Cell.Workload, j.Figure)
}

func figureLabel(wl, key string) string {
	for _, f := range FiguresOf(wl) {
		if f.Key == key {
			return label(f)
		}
	}
	return key
}

// readRun reads a results file, with an error that says what to give instead.
func readRun(path string) (*result.Run, error) {
	r, err := result.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file; name two results files written by `cnperf run` (cnperf-results/run-*.json)", path)
	case err != nil:
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return nil, fmt.Errorf("%s; compare takes results files written by `cnperf run`", msg)
	}
	return r, nil
}

func label(f result.Figure) string {
	if f.Label != "" {
		return f.Label
	}
	return f.Key
}

func describeRun(r *result.Run) string {
	rounds := fmt.Sprintf("%d round(s)", r.Rounds)
	if r.Rounds == 0 {
		rounds = "no rounds recorded"
	}
	when := "start unknown"
	if !r.StartedAt.IsZero() {
		when = r.StartedAt.Format("2006-01-02 15:04")
	}
	s := fmt.Sprintf("%s, %s, cnperf %s", when, rounds, r.Version)
	if r.Incomplete {
		s += ", incomplete"
	}
	return s
}

// PrintComparison writes a run comparison for people, with the gate's
// judgements where there are some.
func PrintComparison(w io.Writer, rc *stats.RunComparison, oldRun, newRun *result.Run, judged []stats.Judgement) {
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n\n", rc.Old, describeRun(oldRun), rc.New, describeRun(newRun))
	if len(rc.Changes) == 0 {
		fmt.Fprintln(w, "no cell and figure measured in both files")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "cell\tfigure\told median (n)\tnew median (n)\tnew/old (geo. means)\t%.0f%% interval\tp\tverdict\n", 100*rc.Level)
		for _, c := range rc.Changes {
			ci, p := "-", "-"
			if c.Change.CILevel > 0 {
				ci = fmt.Sprintf("%.2f..%.2f", c.Change.CILow, c.Change.CIHigh)
				p = formatP(c.Change.P)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s (%d)\t%s (%d)\t%.2fx\t%s\t%s\t%s\n",
				stats.CellName(c.Cell), label(c.Figure),
				formatValue(c.Figure, c.Old.Median), c.Old.N, formatValue(c.Figure, c.New.Median), c.New.N,
				c.Change.Ratio, ci, p, verdictText(c.Change))
		}
		tw.Flush()
	}
	for _, l := range []struct {
		name  string
		cells []result.CellKey
	}{{"only in old", rc.OnlyOld}, {"only in new", rc.OnlyNew}, {"failed in every round of the new run", rc.FailedNew}, {"failed in every round of the old run", rc.FailedOld}} {
		for _, k := range l.cells {
			fmt.Fprintf(w, "%s: %s\n", l.name, stats.CellName(k))
		}
	}
	for _, warn := range rc.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	fmt.Fprintf(w, "\nnew/old is the ratio of the geometric means of each run's rounds, not the quotient of the medians shown; its interval and p: Welch's t on the logarithms of every round of both runs.\n")
	fmt.Fprintf(w, "verdicts: differs = p < %g and the whole interval beyond 1 ± %.0f %%; equivalent = the whole interval within 1 ± %.0f %%; undecided = neither shown (~N: rounds in each run that would decide at this spread).\n",
		rc.Alpha, 100*rc.MinEffect, 100*rc.MinEffect)
	if judged == nil {
		return
	}
	n := map[string]int{}
	for _, j := range judged {
		n[j.Verdict]++
	}
	if stats.Compared(judged) == 0 {
		fmt.Fprintf(w, "\ngate: nothing compared: %s; the gate fails (exit 5), even with --allow-undecided\n", NothingCompared(rc))
		return
	}
	fmt.Fprintf(w, "\ngate: %d pass, %d regression, %d undecided (a regression: the whole interval worse than the limit; a pass: its worse end within it)\n",
		n[stats.GatePass], n[stats.GateRegression], n[stats.GateUndecided])
	for _, j := range judged {
		if j.Verdict != stats.GatePass {
			fmt.Fprintf(w, "  %s: %s: %s\n", j.Verdict, judgedName(j), j.Why)
		}
	}
	for _, x := range rc.MachineWarnings() {
		run, rest, _ := strings.Cut(x, ": ")
		kind, _, _ := strings.Cut(rest, ":")
		fmt.Fprintf(w, "  undecided: the machine: the %s warned of a %s (above)\n", run, kind)
	}
}

// verdictText says what a change shows, and for an undecided one what
// would decide it.
func verdictText(c result.Comparison) string {
	switch stats.VerdictOf(c) {
	case stats.Differs:
		return "differs: " + c.Direction
	case stats.Equivalent:
		return fmt.Sprintf("equivalent (within ±%.0f %%)", 100*c.MinEffect)
	}
	switch {
	case c.CILevel == 0:
		return "undecided: one round, no test (--repeat 3 or more)"
	case c.RoundsNeeded > 0:
		return fmt.Sprintf("undecided: not shown (~%d rounds)", c.RoundsNeeded)
	}
	return "undecided: not shown (no round count within 1000 decides at this spread)"
}

func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// formatValue prints a figure in its unit with 3 significant digits and a
// k/M suffix for large numbers.
func formatValue(f result.Figure, v float64) string {
	d := f.Display(v)
	a := math.Abs(d)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(d/1e9, 'f', 2, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(d/1e6, 'f', 2, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(d/1e3, 'f', 1, 64) + "k"
	case a >= 100:
		return strconv.FormatFloat(d, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(d, 'f', 1, 64)
	}
	return strconv.FormatFloat(d, 'f', 2, 64)
}
