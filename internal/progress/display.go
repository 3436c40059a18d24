package progress

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Display shows an Estimator's status: on a terminal a line kept at the
// bottom, redrawn every second and moved down past every progress line
// written through the Display; elsewhere (a CI log, a file) the status as
// one plain line after every finished cell. It is the run's progress
// writer and its sched.Tracker at once, so the two never interleave.
type Display struct {
	mu    sync.Mutex
	out   io.Writer
	live  bool
	now   func() time.Time
	est   *Estimator
	shown bool // the status line is on the screen
	mid   bool // the last write ended mid-line: no status under it yet
	stop  chan struct{}
	tick  time.Duration
}

// New makes a display writing to out; live redraws a status line in place
// (a terminal). now is the clock (nil: the wall clock).
func New(out io.Writer, live bool, now func() time.Time) *Display {
	if now == nil {
		now = time.Now
	}
	return &Display{out: out, live: live, now: now, tick: time.Second}
}

// For makes the display for f: live when f is a terminal.
func For(f *os.File) *Display { return New(f, IsTerminal(f), nil) }

// IsTerminal says f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Write writes progress lines above the status line.
func (d *Display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clear()
	n, err := d.out.Write(p)
	if len(p) > 0 {
		d.mid = !bytes.HasSuffix(p, []byte("\n"))
	}
	d.draw()
	return n, err
}

// clear removes the status line from the screen.
func (d *Display) clear() {
	if d.shown {
		io.WriteString(d.out, "\r\033[K")
		d.shown = false
	}
}

// draw puts the status line on the screen (live, a run under way, at the
// start of a line).
func (d *Display) draw() {
	if !d.live || d.est == nil || d.mid {
		return
	}
	io.WriteString(d.out, "\r\033[K"+d.est.Status())
	d.shown = true
}

func (d *Display) update(f func(e *Estimator)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.est == nil {
		return
	}
	f(d.est)
	d.clear()
	d.draw()
}

// Plan starts following a run (sched.Tracker).
func (d *Display) Plan(units [][]time.Duration, rounds int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.est = NewEstimator(d.now)
	d.est.Plan(units, rounds)
	if d.live {
		d.stop = make(chan struct{})
		go d.ticker(d.stop)
	}
	d.draw()
}

// ticker redraws the status line every tick: elapsed and left move.
func (d *Display) ticker(stop chan struct{}) {
	t := time.NewTicker(d.tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			d.update(func(*Estimator) {})
		}
	}
}

// Skip takes a skipped deployment off (sched.Tracker).
func (d *Display) Skip(cells []time.Duration) { d.update(func(e *Estimator) { e.Skip(cells) }) }

// Building says a deployment's build begins (sched.Tracker).
func (d *Display) Building() { d.update((*Estimator).Building) }

// Built says it is built (sched.Tracker).
func (d *Display) Built() { d.update((*Estimator).Built) }

// TornDown says a deployment was torn down (sched.Tracker).
func (d *Display) TornDown() { d.update((*Estimator).TornDown) }

// CellStart says a cell run begins (sched.Tracker).
func (d *Display) CellStart(round int, planned time.Duration) {
	d.update(func(e *Estimator) { e.CellStart(round, planned) })
}

// CellDone says it finished (sched.Tracker); off a terminal, the status
// is printed as a line.
func (d *Display) CellDone(planned time.Duration) {
	d.update(func(e *Estimator) { e.CellDone(planned) })
	if !d.live {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.est != nil {
			io.WriteString(d.out, d.est.Status()+"\n")
		}
	}
}

// Finish ends the run's status line (sched.Tracker): what comes after it
// (the table) starts on a clean line.
func (d *Display) Finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stop != nil {
		close(d.stop)
		d.stop = nil
	}
	d.clear()
	d.est = nil
}
