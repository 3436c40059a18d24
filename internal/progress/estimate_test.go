package progress

import (
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFake() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 2, 14, 0, 0, 0, time.UTC)}
}

// step is one thing that happens in a run: time passes, then an event.
type step struct {
	after time.Duration
	do    func(e *Estimator)
}

func at(after time.Duration, do func(e *Estimator)) step { return step{after, do} }

func cellStart(round int, planned time.Duration) func(*Estimator) {
	return func(e *Estimator) { e.CellStart(round, planned) }
}

func cellDone(planned time.Duration) func(*Estimator) {
	return func(e *Estimator) { e.CellDone(planned) }
}

const s = time.Second

func TestEstimatorLeft(t *testing.T) {
	ms := time.Millisecond
	twoUnits := [][]time.Duration{{s, s}, {s}} // 3 cells of 1 s
	tests := []struct {
		name   string
		units  [][]time.Duration
		rounds int
		steps  []step
		want   time.Duration
	}{
		{
			name: "plan only: measuring, guessed set-up, builds and teardowns",
			// 6 cell runs x (1 s + 250 ms) + 2 x 500 ms + 2 x 100 ms
			units: twoUnits, rounds: 2, want: 6*s + 6*CellOverhead + 2*BuildCost + 2*TeardownCost,
		},
		{
			name: "builds and a cell's set-up are learnt",
			// builds took 1 s and 3 s (both done: no build left); the cell
			// took 1.5 s for 1 s: 5 left x 1.5 s, 2 teardowns
			units: twoUnits, rounds: 2,
			steps: []step{at(0, (*Estimator).Building), at(s, (*Estimator).Built), at(0, (*Estimator).Building), at(3*s, (*Estimator).Built),
				at(0, cellStart(1, s)), at(1500*ms, cellDone(s))},
			want: 5*1500*ms + 2*TeardownCost,
		},
		{
			name:  "a build under way counts what is left of it",
			units: twoUnits, rounds: 1,
			steps: []step{at(0, (*Estimator).Building), at(200*ms, nil)},
			want:  3*s + 3*CellOverhead + 2*BuildCost - 200*ms + 2*TeardownCost,
		},
		{
			name:  "a running cell counts what is left of it",
			units: [][]time.Duration{{2 * s, s}}, rounds: 1,
			steps: []step{at(0, (*Estimator).Building), at(0, (*Estimator).Built), at(0, cellStart(1, 2*s)), at(500*ms, nil)},
			want:  3*s + 2*CellOverhead - 500*ms + TeardownCost,
		},
		{
			name:  "a cell running late counts nothing of itself, never less",
			units: [][]time.Duration{{2 * s, s}}, rounds: 1,
			steps: []step{at(0, (*Estimator).Building), at(0, (*Estimator).Built), at(0, cellStart(1, 2*s)), at(time.Minute, nil)},
			want:  s + CellOverhead + TeardownCost,
		},
		{
			name:  "a cell faster than planned learns no negative set-up",
			units: [][]time.Duration{{2 * s, 2 * s}}, rounds: 1,
			steps: []step{at(0, (*Estimator).Building), at(0, (*Estimator).Built), at(0, cellStart(1, 2*s)), at(1500*ms, cellDone(2*s))},
			want:  2*s + TeardownCost,
		},
		{
			name:  "a skipped unit's cells come off, every round",
			units: twoUnits, rounds: 3,
			steps: []step{at(0, func(e *Estimator) { e.Skip([]time.Duration{s, s}) })},
			want:  3*(s+CellOverhead) + BuildCost + TeardownCost,
		},
		{
			name:  "cells of unknown length: guessed, then as the first took",
			units: [][]time.Duration{{0, s}}, rounds: 2,
			want: 2*UnknownCell + 2*(s+CellOverhead) + BuildCost + TeardownCost,
		},
		{
			name:  "cells of unknown length: learnt",
			units: [][]time.Duration{{0, s}}, rounds: 2,
			steps: []step{at(0, (*Estimator).Building), at(0, (*Estimator).Built), at(0, cellStart(1, 0)), at(3*s, cellDone(0))},
			want:  3*s + 2*(s+CellOverhead) + TeardownCost,
		},
		{
			name:  "all done and torn down: nothing left",
			units: [][]time.Duration{{s}}, rounds: 1,
			steps: []step{at(0, (*Estimator).Building), at(0, (*Estimator).Built), at(0, cellStart(1, s)), at(s, cellDone(s)), at(0, (*Estimator).TornDown)},
			want:  0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFake()
			e := NewEstimator(c.now)
			e.Plan(tt.units, tt.rounds)
			for _, st := range tt.steps {
				c.advance(st.after)
				if st.do != nil {
					st.do(e)
				}
			}
			if got := e.Left(); got != tt.want {
				t.Errorf("Left() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEstimatorStatus(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  string
	}{
		{
			name:  "building",
			steps: []step{at(0, (*Estimator).Building), at(2*s, nil)},
			want:  "[building 1/1, 0:02 elapsed, ETA 14:00:23, 0:21 left]",
		},
		{
			name: "second cell of the second round",
			steps: []step{at(0, (*Estimator).Building), at(s, (*Estimator).Built),
				at(0, cellStart(1, 10*s)), at(10*s, cellDone(10*s)), at(0, cellStart(2, 10*s)), at(4*s, nil)},
			want: "[cell 2/2, round 2/2, 0:15 elapsed, ETA 14:00:21, 0:06 left]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFake()
			e := NewEstimator(c.now)
			e.Plan([][]time.Duration{{10 * s}}, 2)
			for _, st := range tt.steps {
				c.advance(st.after)
				if st.do != nil {
					st.do(e)
				}
			}
			if got := e.Status(); got != tt.want {
				t.Errorf("Status() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClockAndAbout(t *testing.T) {
	tests := []struct {
		d            time.Duration
		clock, about string
	}{
		{0, "0:00", "about 10 s"},
		{1400 * time.Millisecond, "0:01", "about 10 s"},
		{44 * s, "0:44", "about 40 s"},
		{59 * s, "0:59", "about 60 s"},
		{6*time.Minute + 20*s, "6:20", "about 6 min"},
		{6*time.Minute + 40*s, "6:40", "about 7 min"},
		{80 * time.Minute, "1:20:00", "about 1 h 20 min"},
		{-s, "0:00", "about 10 s"},
	}
	for _, tt := range tests {
		if got := Clock(tt.d); got != tt.clock {
			t.Errorf("Clock(%v) = %q, want %q", tt.d, got, tt.clock)
		}
		if got := About(tt.d); got != tt.about {
			t.Errorf("About(%v) = %q, want %q", tt.d, got, tt.about)
		}
	}
}

func TestEstimatePlan(t *testing.T) {
	// the default suite's shape: 6 deployments, 14 cells of 5 s, 3 rounds
	units := [][]time.Duration{{5 * s, 5 * s, 5 * s, 5 * s}, {5 * s, 5 * s}, {5 * s, 5 * s}, {5 * s, 5 * s}, {5 * s, 5 * s}, {5 * s, 5 * s}}
	got := EstimatePlan(units, 3)
	want := 42*5*s + 42*CellOverhead + 6*BuildCost + 6*TeardownCost
	if got.Total != want || got.Cells != 42 || got.Units != 6 || got.Measuring != 210*s || got.Unknown != 0 {
		t.Fatalf("EstimatePlan = %+v, want total %v, 42 cells, 6 units, 3:30 measuring", got, want)
	}
	if text, w := got.String(), "about 4 min (42 cell runs measuring 3:30, 250ms set-up each; 6 deployments built at 500ms and torn down at 100ms each)"; text != w {
		t.Errorf("String() = %q, want %q", text, w)
	}
	unk := EstimatePlan([][]time.Duration{{0}}, 2)
	if unk.Unknown != 2 || unk.Total != 2*UnknownCell+BuildCost+TeardownCost {
		t.Errorf("unknown cells: %+v", unk)
	}
}
