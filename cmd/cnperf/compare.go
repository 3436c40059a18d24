package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

const compareUsage = `usage: cnperf compare OLD.json NEW.json [--fail-on-regression PCT] [--json FILE]

Compares two results files written by cnperf run, cell by cell (network,
placement, workload): for each headline figure, NEW's median over its rounds
against OLD's, the change NEW/OLD with its 95 % interval (Welch's t on the
logarithms, every round of both runs) and a verdict: better or worse only when
p < 0.05 and the whole interval is beyond ±5 %, else no significant change.
Cells measured in one file only are listed as such. Runs of one round have no
interval: rerun with --repeat N.

flags:
`

// regressionExit is the exit status of --fail-on-regression.
const regressionExit = exitCode(3)

func cmdCompare(args []string) error { return compareMain(args, os.Stdout) }

func compareMain(args []string, stdout io.Writer) error {
	fs := newFlags("compare")
	fs.SetOutput(io.Discard)
	failOn := fs.String("fail-on-regression", "", "exit with status 3 when a figure is significantly worse by more than `PCT` percent (e.g. 10)")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to `FILE`")
	// Flags may come before, between or after the two files.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, compareUsage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return err
			}
			return fmt.Errorf("%v; see `cnperf compare -h`", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 2 {
		return fmt.Errorf("want two results files, got %d: cnperf compare OLD.json NEW.json (files written by `cnperf run`)", len(files))
	}
	limit := -1.0
	if *failOn != "" {
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(*failOn), "%"), 64)
		if err != nil || math.IsNaN(pct) || pct < 0 || pct > 1000 {
			return fmt.Errorf("--fail-on-regression %q: want a percentage from 0 to 1000, e.g. --fail-on-regression 10", *failOn)
		}
		limit = pct / 100
	}
	var runs [2]*result.Run
	for i, f := range files {
		r, err := readRun(f)
		if err != nil {
			return err
		}
		runs[i] = r
	}
	rc := stats.CompareRuns(runs[0], runs[1], report.FiguresOf, stats.Default)
	rc.Old, rc.New = files[0], files[1]
	printComparison(stdout, rc, runs[0], runs[1])
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rc, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the comparison: %v", err)
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %v; name a file in a folder you can write", err)
		}
	}
	if limit >= 0 {
		if bad := rc.Regressions(limit); len(bad) > 0 {
			var names []string
			for _, c := range bad {
				names = append(names, fmt.Sprintf("%s %s %.2fx", stats.CellName(c.Cell), label(c.Figure), c.Change.Ratio))
			}
			return fmt.Errorf("%d figure(s) significantly worse by more than %s %%: %s (%w)",
				len(bad), strconv.FormatFloat(limit*100, 'g', -1, 64), strings.Join(names, "; "), regressionExit)
		}
	}
	return nil
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

func printComparison(w io.Writer, rc *stats.RunComparison, oldRun, newRun *result.Run) {
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n\n", rc.Old, describeRun(oldRun), rc.New, describeRun(newRun))
	if len(rc.Changes) == 0 {
		fmt.Fprintln(w, "no cell and figure measured in both files")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "cell\tfigure\told (n)\tnew (n)\tnew/old\t%.0f%% interval\tp\tverdict\n", 100*rc.Level)
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
	}{{"only in old", rc.OnlyOld}, {"only in new", rc.OnlyNew}} {
		for _, k := range l.cells {
			fmt.Fprintf(w, "%s: %s\n", l.name, stats.CellName(k))
		}
	}
	for _, warn := range rc.Warnings {
		fmt.Fprintln(w, "warning: "+warn)
	}
	fmt.Fprintf(w, "\nnew/old is the ratio of the medians; interval and p from Welch's t on the logarithms of every round of both runs; a verdict needs p < %g and the whole interval beyond ±%.0f %%.\n",
		rc.Alpha, 100*rc.MinEffect)
}

func verdictText(c result.Comparison) string {
	switch {
	case c.CILevel == 0:
		return "not tested (one round: use --repeat)"
	case c.Verdict == stats.Same:
		return "no significant change"
	}
	return c.Verdict
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
