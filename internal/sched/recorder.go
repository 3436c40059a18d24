package sched

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cnperf/cnperf/internal/result"
)

// Recorder is the one place results are logged and kept: each result is
// appended to the run, printed as a progress line and, with a path, the
// whole run is written to the file (atomically, marked incomplete) so that
// a crash, a kill or a failure late in a long run keeps every cell
// finished before it.
type Recorder struct {
	Run  *result.Run
	Path string    // results file; "" keeps them in memory only
	Log  io.Writer // progress lines; nil for none
	// Brief is the progress text of a result (default: its error or a few
	// of its figures).
	Brief func(result.Result) string

	mu       sync.Mutex
	writeErr error
	saved    int // results in the file's last complete write
	written  bool
}

// ErrNotSaved is a run stopped because its results file could not be
// written (a full disk): there is no point measuring what cannot be kept.
// The file, written atomically, still holds the run as of its last
// complete write.
var ErrNotSaved = errors.New("results could not be saved")

// NotSaved is the error of a run whose file could not be written.
type NotSaved struct {
	Path  string
	Err   error // the write's
	Saved int   // results in the file's last complete write
	// Written says a complete write happened (else the file was never
	// written by this run).
	Written bool
}

func (e *NotSaved) Error() string {
	kept := "no complete file was written"
	if e.Written {
		kept = fmt.Sprintf("%s holds the %d results recorded before it (marked incomplete)", e.Path, e.Saved)
	}
	return fmt.Sprintf("%v; the run stopped: %s", e.Err, kept)
}

func (e *NotSaved) Unwrap() []error { return []error{ErrNotSaved, e.Err} }

// NotSaved returns the write failure that stops the run, or nil.
func (r *Recorder) NotSaved() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writeErr == nil {
		return nil
	}
	return &NotSaved{Path: r.Path, Err: r.writeErr, Saved: r.saved, Written: r.written}
}

// Logf prints a progress line.
func (r *Recorder) Logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}

// Result records one finished measurement.
func (r *Recorder) Result(res result.Result) {
	r.mu.Lock()
	r.Run.Results = append(r.Run.Results, res)
	r.mu.Unlock()
	name := res.Workload
	if res.Step != "" {
		name += " " + res.Step
	}
	where := res.Placement
	if res.LB != "" {
		where = "lb=" + res.LB
	}
	text := ""
	if res.Error != "" {
		text = "error: " + res.Error
	} else if r.Brief != nil {
		text = r.Brief(res)
	}
	r.Logf("  %-10s %-10s %-11s %s", res.Network, where, name, text)
	r.persist()
}

// SkipUnit records that a unit was skipped, and why.
func (r *Recorder) SkipUnit(s result.Skip, why error) {
	s.Reason = why.Error()
	r.mu.Lock()
	r.Run.Skipped = append(r.Run.Skipped, s)
	r.mu.Unlock()
	name := s.Network
	if s.Placement != "" {
		name += " " + s.Placement
	}
	r.Logf("skip %s: %s", name, s.Reason)
	r.persist()
}

// plan adds n cell runs to what the run is to measure (n < 0: a skipped
// unit's cells come off).
func (r *Recorder) plan(n int) {
	r.mu.Lock()
	r.Run.CellsPlanned += n
	r.mu.Unlock()
}

// cellDone counts a finished cell run and saves the run.
func (r *Recorder) cellDone() {
	r.mu.Lock()
	r.Run.CellsDone++
	r.mu.Unlock()
	r.persist()
}

func (r *Recorder) persist() {
	if r.Path == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.Run.Incomplete
	r.Run.Incomplete = true
	if r.writeErr != nil {
		// the run is stopping: the last complete file stays as it is
	} else if err := r.Run.WriteAtomic(r.Path); err != nil {
		r.writeErr = err
	} else {
		r.saved, r.written = len(r.Run.Results), true
	}
	r.Run.Incomplete = was
}

// Finish writes the run as complete (incomplete when complete is false).
func (r *Recorder) Finish(complete bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Run.Incomplete = !complete
	if r.Path == "" {
		return nil
	}
	return r.Run.WriteAtomic(r.Path)
}
