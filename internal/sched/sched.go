// Package sched is the one scheduler every experiment runs on. An
// experiment hands it units — a deployment to build (a topology on a
// backend) and the cells to measure in it — and the scheduler builds every
// unit, runs every cell once per round, in an order that changes from
// round to round so that drift of the machine hits every network alike,
// records each result in one place, and tears everything down, also on an
// error or an interrupt.
package sched

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/result"
)

// Unit is one deployment and the cells measured in it.
type Unit struct {
	Name     string // for progress lines and errors, e.g. "vxlan"
	Backend  backend.Backend
	Topology backend.Topology
	// Prepare runs once after the deployment is built (program services).
	// The cleanup it returns runs before the deployment's teardown. An
	// error that is backend.ErrSkip skips the unit with the reason.
	Prepare func(ctx context.Context, d backend.Deployment) (cleanup func() error, err error)
	Cells   []Cell
	// Skip is how a skip of this unit is recorded (Network and, where it
	// applies, Placement); Reason is filled in.
	Skip result.Skip
	// Phase orders units that must not be live at once: the units of
	// each phase are built, measured for every round, interleaved, and
	// torn down before the next phase's are built (ascending). A run's
	// units are all in phase 0 unless an experiment says otherwise (a
	// cluster's Services of one scale step would be seen by the
	// measurements of another: services.Units).
	Phase int
}

// Cell is one measurement of a unit, run once per round. It records its
// results (one, or one per step of a multi-step workload) itself.
type Cell struct {
	Name string
	Run  func(ctx context.Context, d backend.Deployment, round int, rec *Recorder) error
}

// Order is the order of n cells in round r (1-based): rotated by r-1 and
// reversed in even rounds, so that over rounds every cell runs early and
// late, and after and before every other (the ABBA idea, generalised).
func Order(n, r int) []int {
	out := make([]int, n)
	if n == 0 {
		return out
	}
	shift := (r - 1) % n
	for i := range out {
		out[i] = (i + shift) % n
	}
	if r%2 == 0 {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

type built struct {
	u       *Unit
	d       backend.Deployment
	cleanup func() error
}

// Run builds every unit, runs rounds rounds of every cell, and tears down,
// phase by phase (Unit.Phase). It returns ctx's error when cut short
// (never recording that as a skip); whatever was measured until then is
// in rec.
func Run(ctx context.Context, units []Unit, rounds int, rec *Recorder) error {
	if rounds < 1 {
		rounds = 1
	}
	for _, u := range units {
		rec.plan(len(u.Cells) * rounds)
	}
	var phases []int
	for _, u := range units {
		if !slices.Contains(phases, u.Phase) {
			phases = append(phases, u.Phase)
		}
	}
	slices.Sort(phases)
	for _, ph := range phases {
		var in []*Unit
		for i := range units {
			if units[i].Phase == ph {
				in = append(in, &units[i])
			}
		}
		if len(phases) > 1 {
			rec.Logf("phase %d of %d: %d deployment(s)", slices.Index(phases, ph)+1, len(phases), len(in))
		}
		if err := runPhase(ctx, in, rounds, rec); err != nil {
			return err
		}
	}
	return nil
}

// runPhase builds units, runs rounds rounds of their cells, and tears
// them down.
func runPhase(ctx context.Context, units []*Unit, rounds int, rec *Recorder) (err error) {
	skip := func(u *Unit, why error) {
		rec.plan(-len(u.Cells) * rounds)
		rec.SkipUnit(u.Skip, why)
	}
	var live []built
	defer func() {
		for i := len(live) - 1; i >= 0; i-- {
			b := live[i]
			if b.cleanup != nil {
				if cerr := b.cleanup(); cerr != nil && err == nil {
					err = fmt.Errorf("%s: %w", b.u.Name, cerr)
				}
			}
			if terr := b.d.Teardown(); terr != nil && err == nil {
				err = fmt.Errorf("%s: teardown: %w", b.u.Name, terr)
			}
		}
	}()
	for _, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := u.Backend.Check(u.Topology.Network); err != nil {
			skip(u, err)
			continue
		}
		d, err := u.Backend.Deploy(ctx, u.Topology)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if errors.Is(err, backend.ErrSkip) {
				skip(u, err)
				continue
			}
			return fmt.Errorf("%s: %w", u.Name, err)
		}
		b := built{u: u, d: d}
		live = append(live, b)
		d.Environment(ctx, &rec.Run.Environment)
		if u.Prepare != nil {
			cleanup, err := u.Prepare(ctx, d)
			live[len(live)-1].cleanup = cleanup
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				if !errors.Is(err, backend.ErrSkip) {
					return fmt.Errorf("%s: %w", u.Name, err)
				}
				skip(u, err)
				live = live[:len(live)-1]
				if cleanup != nil {
					_ = cleanup()
				}
				if terr := d.Teardown(); terr != nil {
					return fmt.Errorf("%s: teardown: %w", u.Name, terr)
				}
				continue
			}
		}
		if r, ok := d.(backend.Recorder); ok {
			rec.Run.Builds = append(rec.Run.Builds, result.Build{
				Network: d.Network(), Backend: u.Backend.Name(), ID: d.ID(), Commands: r.Commands()})
		}
	}
	type slot struct {
		b    built
		cell Cell
	}
	var cells []slot
	for _, b := range live {
		for _, c := range b.u.Cells {
			cells = append(cells, slot{b, c})
		}
	}
	for r := 1; r <= rounds; r++ {
		if rounds > 1 {
			rec.Logf("round %d of %d", r, rounds)
		}
		for _, i := range Order(len(cells), r) {
			if err := ctx.Err(); err != nil {
				return err
			}
			s := cells[i]
			if err := s.cell.Run(ctx, s.b.d, r, rec); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				return fmt.Errorf("%s %s: %w", s.b.u.Name, s.cell.Name, err)
			}
			if err := ctx.Err(); err != nil {
				// cut short: a cell returns quietly when interrupted, and
				// what it did not finish is not done
				return err
			}
			rec.cellDone()
			if err := rec.NotSaved(); err != nil {
				return err
			}
		}
	}
	return nil
}
