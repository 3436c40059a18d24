package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
)

// cnperf's exit statuses, agreed project-wide: 0 success (a run: every
// cell measured), 1 failure (a run could not proceed), 2 usage, 3 a
// regression (compare), 4 a run in which some cells failed (its table
// and file still written), 5 compare's gate undecided.
const (
	usageExit       = exitCode(2)
	cellsFailedExit = exitCode(4)
)

// withStatus is an error that exits with code, its message unchanged.
type withStatus struct {
	err  error
	code exitCode
}

func (e withStatus) Error() string   { return e.err.Error() }
func (e withStatus) Unwrap() []error { return []error{e.err, e.code} }

// usageErr marks err as bad usage (exit 2); nil stays nil.
func usageErr(err error) error {
	if err == nil {
		return nil
	}
	return withStatus{err, usageExit}
}

// maxListed bounds the failed cells listed at the end of a run.
const maxListed = 20

// listFailed prints, last, the run's failed measurements with their
// causes, so that a user (or a CI log) sees what failed without reading
// the table.
func listFailed(w io.Writer, run *result.Run) {
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

// cellsStatus is a finished run's status: nil when every measurement
// succeeded, else exit 4 saying how many failed.
func cellsStatus(run *result.Run, path string) error {
	failed := failedResults(run)
	if len(failed) == 0 {
		return nil
	}
	if len(failed) == len(run.Results) {
		return withStatus{fmt.Errorf("all %d measurements failed (listed above, with their causes, also in %s)", len(failed), path), cellsFailedExit}
	}
	return withStatus{fmt.Errorf("%d of %d measurements failed (listed above); the table and %s hold them and the %d that succeeded",
		len(failed), len(run.Results), path, len(run.Results)-len(failed)), cellsFailedExit}
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
func saveAndShow(setup *runSetup, run *result.Run, path string, execErr error) error {
	if len(run.Results) == 0 && execErr != nil {
		return nil // nothing measured; execErr says why
	}
	// incomplete: cells the run was to measure were not; a run whose every
	// cell finished but that failed after (a teardown) is complete
	run.Incomplete = execErr != nil && (run.CellsPlanned == 0 || run.CellsDone < run.CellsPlanned)
	saveErr := run.WriteAtomic(path)
	fmt.Println()
	report.Table(os.Stdout, run) // ends with the run's warnings
	var notSaved *sched.NotSaved
	switch {
	case saveErr == nil:
		fmt.Printf("\nresults: %s\n", path)
	case errors.As(execErr, &notSaved):
		fmt.Printf("\nresults: not saved: %v\n", notSaved)
		return fmt.Errorf("results file %s: %w", path, execErr)
	default:
		fmt.Printf("\nresults: not saved: %v\n", saveErr)
		return fmt.Errorf("results file %s: %w; the table above is all there is of this run", path, saveErr)
	}
	if err := writeOutputs(setup.outputs, []report.Input{report.NewInput(path, run)}); err != nil {
		return err
	}
	return nil
}

// preflightFor is preflight for a run on backendName: a user who is not
// root is told what that backend needs root for.
func preflightFor(backendName string) error {
	if os.Geteuid() == 0 {
		return preflight()
	}
	switch backendName {
	case "docker":
		return errors.New("needs root: the docker backend keeps its agents' control sockets in /run/cnperf-docker and reads its containers' counters in /proc; run it as root (sudo cnperf run ...)")
	case "", "lab":
		return errors.New("needs root to create network namespaces; run it as root (sudo cnperf run ...)")
	}
	return fmt.Errorf("needs root: the %s backend builds network namespaces; run it as root (sudo cnperf run ...)", backendName)
}
