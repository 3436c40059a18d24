// Package experiment is the registry of what cnperf can measure. An
// experiment takes its share of a plan (the workloads it handles, or the
// whole plan when the plan is of its kind) and turns it into scheduler
// units: the topology each needs and the cells measured in it. The
// scheduler (package sched) runs every unit's cells in rounds; the measure
// path (package measure) runs each workload. Adding an experiment is one
// new folder and one line in experiment/all.
package experiment

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

// Placement is where the client runs relative to the server.
type Placement = backend.Placement

// Case is one network in one placement.
type Case struct {
	Network   string
	Placement Placement
}

// Plan is what a run measures.
type Plan struct {
	Cases     []Case
	Workloads []string
	Params    workload.Params // zero fields take each workload's defaults
	Rounds    int             // interleaved rounds (default 1)
	// Pin, when set, binds the client agents to CPU Pin[0] and the server
	// agents to CPU Pin[1], as the studies pinned their processes.
	Pin []int
	// LBs and Services make it a ClusterIP service run: the load
	// balancers ("none" = pod IP) and the scale steps (default 1).
	LBs      []string
	Services []int
	// PhasedServices measures each service count (and placement) in a
	// phase of its own, one after the other, real and replica rows
	// interleaved within it: set where a backend of the run shares its
	// services between deployments (backend.SharedServices).
	PhasedServices bool
	// StartupPods is how many pods the start-up experiment creates per
	// round (default 10, the paper's mean of 10).
	StartupPods int
	// MessageSizes, when more than one, sweeps every stream and rr
	// workload over these message sizes (the sizes experiment).
	MessageSizes []int
	// Parallel, above 1, runs that many flows at once between each pair
	// (the parallel experiment).
	Parallel int
	// Neighbours are the noisy neighbours beside the measured pairs (the
	// neighbours experiment), as --neighbours gives them: "busy:5",
	// "periodic:5:10%", "stream:2".
	Neighbours string
	// AllToAllPods are the pod counts of the all-to-all experiment and
	// Spreads how it places them on two hosts ("1:N-1", "balanced").
	AllToAllPods []int
	Spreads      []string
	// Densities are the idle pods each host carries in the density
	// experiment, one deployment per count (--density 10,50,110,250).
	Densities []int
	// Tunings are the host-tuning profiles (package tuning) every pair
	// cell is measured with, each a deployment of its own, interleaved:
	// "none,study" measures the study's tuning against none.
	Tunings []string
	Backend backend.Backend
	Log     io.Writer
}

// CPUs returns the client and server CPUs (-1 when not pinned).
func (p *Plan) CPUs() (client, server int) {
	if len(p.Pin) == 2 {
		return p.Pin[0], p.Pin[1]
	}
	return -1, -1
}

// PinParam is the params entry that records pinning, or "".
func (p *Plan) PinParam() string {
	if len(p.Pin) == 2 {
		return fmt.Sprintf("client=%d server=%d", p.Pin[0], p.Pin[1])
	}
	return ""
}

// Experiment turns its share of a plan into units.
type Experiment interface {
	Name() string
	Summary() string
	// Claim returns the workloads of p this experiment measures (all of
	// them when the plan is of its kind; none when it has no part in it).
	Claim(p *Plan) []string
	// Validate checks p's part for this experiment before anything is built.
	Validate(p *Plan, workloads []string) error
	// Units builds the scheduler's units for workloads.
	Units(p *Plan, workloads []string) ([]sched.Unit, error)
}

// Finisher is implemented by experiments that add figures across results
// once every round has run (the service study's % against iptables).
type Finisher interface {
	Finish(run *result.Run)
}

// Measurer is implemented by experiments that are measurements of their
// own, selected by name like a workload (`--workloads startup`): Measures
// lists those names with a one-line summary, for `cnperf workloads`.
type Measurer interface {
	Measures() map[string]string
}

// FlagTaker is implemented by an experiment that takes a `cnperf run`
// flag of its own (the start-up experiment's --startup-pods): a run that
// sets the flag without selecting the experiment is refused, not run with
// the flag silently ignored.
type FlagTaker interface {
	TakesFlag(name string) bool
}

// CheckFlag refuses flag name, set by the user, when no experiment of
// shares takes it, naming what it applies to.
func CheckFlag(shares []Share, name string) error {
	for _, sh := range shares {
		if t, ok := sh.Experiment.(FlagTaker); ok && t.TakesFlag(name) {
			return nil
		}
	}
	var takers []string
	for _, e := range All() {
		if t, ok := e.(FlagTaker); ok && t.TakesFlag(name) {
			if m, ok := e.(Measurer); ok {
				for n := range m.Measures() {
					takers = append(takers, n)
				}
			} else {
				takers = append(takers, "--"+e.Name()) // an experiment chosen by its flag
			}
		}
	}
	sort.Strings(takers)
	return fmt.Errorf("--%s applies to %s only; select one with --workloads (or its flag) or drop --%s", name, strings.Join(takers, ", "), name)
}

var (
	mu    sync.Mutex
	order []Experiment // in registration priority order
)

// Register adds an experiment. Experiments claim in the order of their
// priority (lower first); a duplicate name panics (a programming error).
func Register(e Experiment, priority int) {
	mu.Lock()
	defer mu.Unlock()
	for _, x := range order {
		if x.Name() == e.Name() {
			panic("experiment: duplicate " + e.Name())
		}
	}
	order = append(order, e)
	prio[e.Name()] = priority
	sort.SliceStable(order, func(i, j int) bool { return prio[order[i].Name()] < prio[order[j].Name()] })
}

var prio = map[string]int{}

// All lists the experiments in claiming order.
func All() []Experiment {
	mu.Lock()
	defer mu.Unlock()
	return append([]Experiment(nil), order...)
}

// Get finds an experiment by name.
func Get(name string) (Experiment, error) {
	for _, e := range All() {
		if e.Name() == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown experiment %q", name)
}

// Share is one experiment's part of a plan.
type Share struct {
	Experiment Experiment
	Workloads  []string
}

// Split divides p among the experiments: each claims, in order, from the
// workloads not claimed yet.
func Split(p *Plan) ([]Share, error) {
	left := *p
	var out []Share
	for _, e := range All() {
		if len(left.Workloads) == 0 {
			break
		}
		ws := e.Claim(&left)
		if len(ws) == 0 {
			continue
		}
		out = append(out, Share{e, ws})
		taken := map[string]bool{}
		for _, w := range ws {
			taken[w] = true
		}
		var rest []string
		for _, w := range left.Workloads {
			if !taken[w] {
				rest = append(rest, w)
			}
		}
		left.Workloads = rest
	}
	if len(left.Workloads) > 0 {
		if _, err := workload.Get(left.Workloads[0]); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no experiment measures %v", left.Workloads)
	}
	return out, nil
}

// ErrNothing is returned for a plan with nothing to run.
var ErrNothing = errors.New("nothing to run")

// Steps runs workload w from base: once for an ordinary workload, step by
// step for a Stepper, each step chosen from what the earlier ones
// measured. one measures a step and returns its result's figures and
// error; Steps stops early when stop returns true (ctx ended).
func Steps(w workload.Workload, base workload.Params, stop func() bool, one func(params workload.Params, label string) workload.StepResult) {
	st, stepped := w.(workload.Stepper)
	var done []workload.StepResult
	for !stop() {
		params, label := base, ""
		if stepped {
			var more bool
			if params, label, more = st.Next(base, done); !more {
				return
			}
		}
		r := one(params, label)
		if !stepped || stop() {
			return
		}
		done = append(done, r)
	}
}

// DefaultDuration is a measurement's length when neither the plan nor
// the workload sets one.
const DefaultDuration = 5 * time.Second
