// Package progress tells a user where a run is and when it will end: an
// estimator that starts from the plan (every cell's measuring time, the
// rounds, the deployments) and learns the costs the plan does not know
// (a cell's set-up around its measurement, building a deployment) from
// the cells as they finish; and a display that keeps a live status line
// `[cell k/N, round r/R, elapsed, ETA]` at the bottom of a terminal, or
// prints it as a plain line after every cell when the output is a log.
package progress

import (
	"fmt"
	"time"
)

// The costs a plan does not know, guessed until the run has finished one
// to learn from, and used alone by --dry-run. Measured on the lab, on a
// 2-CPU machine under load (load average about 11, docs/progress.md): a
// pair cell spends 50 to 150 ms beyond its measuring time (agents and
// servers started, the CPU meter, the workload's own drain); building
// one network's lab (namespaces, links, agents) takes 50 to 350 ms and
// tearing it down under 50 ms. The guesses round those up. Docker and
// Kubernetes deployments take seconds to build: --dry-run undercounts
// them, the live estimate learns them from the first build. A cell whose
// length the plan does not know (a rate search, the start-up
// measurement) is guessed at 10 s until one has finished.
const (
	CellOverhead = 250 * time.Millisecond
	BuildCost    = 500 * time.Millisecond
	TeardownCost = 100 * time.Millisecond
	UnknownCell  = 10 * time.Second
)

// Estimator follows a run against its plan. Its methods are those of
// sched.Tracker; it is not safe for concurrent use (Display serialises).
type Estimator struct {
	now    func() time.Time
	start  time.Time
	rounds int

	cells, started, done int // cell runs planned (skips off), begun, finished
	round                int
	units, built, torn   int // deployments planned, built, torn down
	building             bool
	buildAt              time.Time

	plannedLeft time.Duration // measuring time of the known cells not finished
	unknownLeft int           // cells not finished whose length is not known

	cellAt      time.Time
	cellPlanned time.Duration
	inCell      bool

	// learnt: a known cell's time beyond its measuring time, an unknown
	// cell's whole time, a deployment's build
	over, unknown, build mean
}

type mean struct {
	sum time.Duration
	n   int
}

func (m *mean) add(d time.Duration) { m.sum += d; m.n++ }

func (m mean) or(guess time.Duration) time.Duration {
	if m.n == 0 {
		return guess
	}
	return m.sum / time.Duration(m.n)
}

// NewEstimator starts an estimate at now() (nil: the wall clock).
func NewEstimator(now func() time.Time) *Estimator {
	if now == nil {
		now = time.Now
	}
	return &Estimator{now: now, start: now()}
}

// Plan sets what the run is to do: every deployment's cells, each its
// measuring time (0: not known), each run once per round.
func (e *Estimator) Plan(units [][]time.Duration, rounds int) {
	e.rounds = max(1, rounds)
	for _, u := range units {
		e.units++
		e.addCells(u, 1)
	}
}

func (e *Estimator) addCells(cells []time.Duration, sign int) {
	for _, d := range cells {
		e.cells += sign * e.rounds
		if d <= 0 {
			e.unknownLeft += sign * e.rounds
			continue
		}
		e.plannedLeft += time.Duration(sign*e.rounds) * d
	}
}

// Skip takes a skipped deployment's cells off the plan.
func (e *Estimator) Skip(cells []time.Duration) {
	e.units--
	e.addCells(cells, -1)
	if e.building {
		e.building = false // its build ended in the skip
	}
}

// Building says a deployment's build begins.
func (e *Estimator) Building() { e.building, e.buildAt = true, e.now() }

// Built says it is built (and prepared).
func (e *Estimator) Built() {
	if e.building {
		e.build.add(e.now().Sub(e.buildAt))
	}
	e.building = false
	e.built++
}

// TornDown says a deployment was torn down.
func (e *Estimator) TornDown() { e.torn++ }

// CellStart says a cell run of round round begins.
func (e *Estimator) CellStart(round int, planned time.Duration) {
	e.started++
	e.round = round
	e.inCell, e.cellAt, e.cellPlanned = true, e.now(), planned
}

// CellDone says the cell run begun last has finished.
func (e *Estimator) CellDone(planned time.Duration) {
	took := e.now().Sub(e.cellAt)
	e.inCell = false
	e.done++
	if planned <= 0 {
		e.unknownLeft--
		e.unknown.add(took)
		return
	}
	e.plannedLeft -= planned
	e.over.add(took - planned)
}

// Left is the time the run still needs, as the plan and what was learnt
// so far say.
func (e *Estimator) Left() time.Duration {
	over := max(0, e.over.or(CellOverhead))
	// an unknown cell: as the unknown ones so far, else its guess
	unknown := e.unknown.or(UnknownCell)
	known := e.cells - e.done - e.unknownLeft
	left := e.plannedLeft + time.Duration(known)*over + time.Duration(e.unknownLeft)*unknown
	if e.inCell {
		expect := unknown
		if e.cellPlanned > 0 {
			expect = e.cellPlanned + over
		}
		left -= min(e.now().Sub(e.cellAt), expect)
	}
	build := e.build.or(BuildCost)
	left += time.Duration(max(0, e.units-e.built)) * build
	if e.building {
		left -= min(e.now().Sub(e.buildAt), build)
	}
	left += time.Duration(max(0, e.units-e.torn)) * TeardownCost
	return max(0, left)
}

// Elapsed is the time since the estimate began.
func (e *Estimator) Elapsed() time.Duration { return e.now().Sub(e.start) }

// Status is the status line: `[cell 3/24, round 1/3, 0:42 elapsed, ETA
// 14:03:12, 1:50 left]`; while the first deployments are built,
// `[building 2/4, ...]`.
func (e *Estimator) Status() string {
	left := e.Left()
	where := fmt.Sprintf("cell %d/%d, round %d/%d", e.started, e.cells, max(1, e.round), e.rounds)
	if e.started == 0 {
		where = fmt.Sprintf("building %d/%d", min(e.built+1, e.units), e.units)
	}
	return fmt.Sprintf("[%s, %s elapsed, ETA %s, %s left]", where, Clock(e.Elapsed()), e.now().Add(left).Round(time.Second).Format("15:04:05"), Clock(left))
}

// Clock writes d as m:ss (h:mm:ss from an hour), rounded to the second.
func Clock(d time.Duration) string {
	s := int((d + time.Second/2) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// About writes an estimate as a person would say it: "about 40 s",
// "about 6 min", "about 1 h 20 min".
func About(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("about %d s", max(1, int((d+5*time.Second)/(10*time.Second)))*10)
	case d < time.Hour:
		return fmt.Sprintf("about %d min", int((d+30*time.Second)/time.Minute))
	}
	m := int((d + 30*time.Second) / time.Minute)
	return fmt.Sprintf("about %d h %d min", m/60, m%60)
}

// Estimate is what a plan will take before it runs (--dry-run): its
// measuring time and the guessed costs around it.
type Estimate struct {
	Cells, Units int
	Measuring    time.Duration // the known cells' measuring time, every round
	Unknown      int           // cell runs whose length the plan does not know
	Total        time.Duration // Measuring plus every guessed cost
}

// EstimatePlan estimates units (each deployment's cells' measuring
// times, 0 not known) run rounds times, as the run's status line would
// before it starts.
func EstimatePlan(units [][]time.Duration, rounds int) Estimate {
	t := time.Unix(0, 0)
	e := NewEstimator(func() time.Time { return t })
	e.Plan(units, rounds)
	return Estimate{Cells: e.cells, Units: e.units, Measuring: e.plannedLeft, Unknown: e.unknownLeft, Total: e.Left()}
}

// String is the estimate with how it was made: "about 6 min (24 cell
// runs measuring 2:00, 1.5 s set-up each; 4 deployments built at 5 s
// and torn down at 1 s each)".
func (s Estimate) String() string {
	unknown := ""
	if s.Unknown > 0 {
		unknown = fmt.Sprintf(", %d of them of unknown length guessed at %s each", s.Unknown, UnknownCell)
	}
	return fmt.Sprintf("%s (%s measuring %s%s, %s set-up each; %s built at %s and torn down at %s each)",
		About(s.Total), Count(s.Cells, "cell run"), Clock(s.Measuring), unknown, CellOverhead, Count(s.Units, "deployment"), BuildCost, TeardownCost)
}

// Count writes n things: "1 cell", "3 cells".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
