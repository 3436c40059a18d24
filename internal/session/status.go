package session

import (
	"errors"
	"fmt"
	"io"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
)

// maxListed bounds the failed cells listed at the end of a run.
const maxListed = 20

// ListFailed prints, last, the run's failed measurements with their
// causes, so that a user (or a CI log) sees what failed without reading
// the table.
func ListFailed(w io.Writer, run *result.Run) {
	failed := failedResults(run)
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfailed: %d of %d measurements:\n", len(failed), len(run.Results))
	for i, r := range failed {
		if i == maxListed {
			fmt.Fprintf(w, "  ... and %d more (see the results file)\n", len(failed)-maxListed)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", cellName(r), r.Error)
	}
}

// CellsStatus is a finished run's status: nil when every measurement
// succeeded, else exit 4 saying how many failed.
func CellsStatus(run *result.Run, path string) error {
	failed := failedResults(run)
	if len(failed) == 0 {
		return nil
	}
	if len(failed) == len(run.Results) {
		return exitcode.With(fmt.Errorf("all %d measurements failed (listed above, with their causes, also in %s)", len(failed), path), exitcode.CellsFailed)
	}
	return exitcode.With(fmt.Errorf("%d of %d measurements failed (listed above); the table and %s hold them and the %d that succeeded",
		len(failed), len(run.Results), path, len(run.Results)-len(failed)), exitcode.CellsFailed)
}

func failedResults(run *result.Run) []result.Result {
	var out []result.Result
	for _, r := range run.Results {
		if r.Error != "" {
			out = append(out, r)
		}
	}
	return out
}

// cellName names a result's cell and round as the progress lines do.
func cellName(r result.Result) string {
	s := r.Network
	if r.Backend != "" {
		s = r.Backend + " " + s
	}
	if r.Placement != "" {
		s += " " + r.Placement
	}
	if r.LB != "" {
		s += fmt.Sprintf(" lb=%s", r.LB)
	}
	if r.Services > 0 {
		s += fmt.Sprintf(" services=%d", r.Services)
	}
	s += " " + r.Workload
	if r.Step != "" {
		s += " " + r.Step
	}
	if r.Round > 0 {
		s += fmt.Sprintf(" round %d", r.Round)
	}
	return s
}

// saveAndShow writes a run's file and prints its table, the table whatever
// happens to the file (a full disk loses no numbers from the screen). It
// returns the error that ends the run: a file that could not be written
// (the last complete one named), or --html/--csv's.
func saveAndShow(o Options, run *result.Run, path string, execErr error) error {
	if len(run.Results) == 0 && execErr != nil {
		return nil // nothing measured; execErr says why
	}
	// incomplete: cells the run was to measure were not; a run whose every
	// cell finished but that failed after (a teardown) is complete
	run.Incomplete = execErr != nil && (run.CellsPlanned == 0 || run.CellsDone < run.CellsPlanned)
	saveErr := run.WriteAtomic(path)
	fmt.Fprintln(o.Stdout)
	report.Table(o.Stdout, run) // ends with the run's warnings
	var notSaved *sched.NotSaved
	switch {
	case saveErr == nil:
		fmt.Fprintf(o.Stdout, "\nresults: %s\n", path)
	case errors.As(execErr, &notSaved):
		fmt.Fprintf(o.Stdout, "\nresults: not saved: %v\n", notSaved)
		return fmt.Errorf("results file %s: %w", path, execErr)
	default:
		fmt.Fprintf(o.Stdout, "\nresults: not saved: %v\n", saveErr)
		return fmt.Errorf("results file %s: %w; the table above is all there is of this run", path, saveErr)
	}
	if err := report.WriteOutputs(o.Stdout, o.Outputs, []report.Input{report.NewInput(path, run)}); err != nil {
		return err
	}
	return nil
}
