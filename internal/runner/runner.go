// Package runner executes a plan (package plan). It divides the plan
// among the registered experiments, which turn their share into units (a
// topology to deploy on a backend and the cells to measure in it); the
// scheduler builds them, runs every cell in interleaved rounds through
// the one measure path, records each result as it comes, and tears
// everything down, whatever happens.
package runner

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	_ "github.com/cnperf/cnperf/internal/experiment/all" // the experiments
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/progress"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// units validates the plan and turns it into the scheduler's units, with
// the backends' names, the experiments' shares and the rounds.
func units(p plan.Plan) ([]sched.Unit, []string, []experiment.Share, int, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, nil, 0, err
	}
	rounds := p.Repeat
	if rounds == 0 {
		rounds = 1
	}
	// with backends made now, with the agent's argv as it is; several
	// backends each deploy the cases they allow, all interleaved
	var us []sched.Unit
	var names []string
	var shares []experiment.Share
	bes := p.Backends()
	phased := false // a cluster's services: one count after the other, on every backend
	for _, be := range bes {
		if s, ok := be.(backend.SharedServices); ok && s.SharedServices() {
			phased = true
		}
	}
	for _, be := range bes {
		ep := p.ExperimentPlan(be)
		ep.Rounds, ep.PhasedServices = rounds, phased
		ep.Cases = nil
		for _, c := range p.Cases {
			if ok, _ := be.Allows(c.Network, c.Placement); ok {
				ep.Cases = append(ep.Cases, c)
			}
		}
		if len(ep.Cases) == 0 {
			continue
		}
		names = append(names, be.Name())
		shs, err := experiment.Split(ep)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		for _, sh := range shs {
			u, err := sh.Experiment.Units(ep, sh.Workloads)
			if err != nil {
				return nil, nil, nil, 0, err
			}
			us = append(us, u...)
		}
		shares = append(shares, shs...)
	}
	return us, names, shares, rounds, nil
}

// DryRun prints what the plan would build and measure, and how long it
// would take (progress.EstimatePlan), building nothing.
func DryRun(w io.Writer, p plan.Plan) error {
	us, _, _, rounds, err := units(p)
	if err != nil {
		return err
	}
	plans := make([][]time.Duration, len(us))
	for i, u := range us {
		var cells []string
		for _, c := range u.Cells {
			plans[i] = append(plans[i], c.Planned)
			cells = append(cells, c.Name)
		}
		fmt.Fprintf(w, "%s: %s\n", u.Name, strings.Join(cells, ", "))
	}
	est := progress.EstimatePlan(plans, rounds)
	fmt.Fprintf(w, "%s, %s, %s: %s\n", progress.Count(len(us), "deployment"), progress.Count(est.Cells/rounds, "cell"), progress.Count(rounds, "round"), est)
	return nil
}

// Execute runs the plan and fills run. It returns ctx's error when cut
// short; whatever was measured until then is in run (and in p.Out). A
// p.Log that is also a sched.Tracker (a progress.Display) follows the run
// with a status line.
func Execute(ctx context.Context, p plan.Plan, run *result.Run) error {
	us, names, shares, rounds, err := units(p)
	if err != nil {
		return err
	}
	if run.Environment.Backend == "" {
		run.Environment.Backend = strings.Join(names, ",")
	}
	run.Environment.UnderlayMTU = p.Lab.MTU
	run.Rounds = rounds
	rec := &sched.Recorder{Run: run, Path: p.Out, Log: p.Log, Brief: measure.Brief}
	if t, ok := p.Log.(sched.Tracker); ok {
		rec.Progress = t
	}
	err = sched.Run(ctx, us, rounds, rec)
	finished := map[string]bool{}
	for _, sh := range shares {
		if f, ok := sh.Experiment.(experiment.Finisher); ok && !finished[sh.Experiment.Name()] {
			finished[sh.Experiment.Name()] = true
			f.Finish(run)
		}
	}
	stats.Summarize(run, workload.FiguresOf)
	return err
}
