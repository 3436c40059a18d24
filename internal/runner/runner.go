// Package runner executes a plan (package plan). It divides the plan
// among the registered experiments, which turn their share into units (a
// topology to deploy on a backend and the cells to measure in it); the
// scheduler builds them, runs every cell in interleaved rounds through
// the one measure path, records each result as it comes, and tears
// everything down, whatever happens.
package runner

import (
	"context"
	"strings"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	_ "github.com/cnperf/cnperf/internal/experiment/all" // the experiments
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// Execute runs the plan and fills run. It returns ctx's error when cut
// short; whatever was measured until then is in run (and in p.Out).
func Execute(ctx context.Context, p plan.Plan, run *result.Run) error {
	if err := p.Validate(); err != nil {
		return err
	}
	rounds := p.Repeat
	if rounds == 0 {
		rounds = 1
	}
	// with backends made now, with the agent's argv as it is; several
	// backends each deploy the cases they allow, all interleaved
	var units []sched.Unit
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
			return err
		}
		for _, sh := range shs {
			us, err := sh.Experiment.Units(ep, sh.Workloads)
			if err != nil {
				return err
			}
			units = append(units, us...)
		}
		shares = append(shares, shs...)
	}
	if run.Environment.Backend == "" {
		run.Environment.Backend = strings.Join(names, ",")
	}
	run.Environment.UnderlayMTU = p.Lab.MTU
	run.Rounds = rounds
	rec := &sched.Recorder{Run: run, Path: p.Out, Log: p.Log, Brief: measure.Brief}
	err := sched.Run(ctx, units, rounds, rec)
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
