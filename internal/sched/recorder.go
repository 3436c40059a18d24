package sched

import (
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
	if err := r.Run.WriteAtomic(r.Path); err != nil && r.writeErr == nil {
		r.writeErr = err
		if r.Log != nil {
			fmt.Fprintf(r.Log, "warning: could not save results so far: %v\n", err)
		}
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
