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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

// Case is one network in one placement.
type Case struct {
	Network   string
	Placement ground.Placement
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
	// Options are the experiments' own options (each declared by the
	// experiments that take it, Optioner), as text by name: "parallel":
	// "4", "pods": "2,4,8". An option not set is absent.
	Options map[string]string
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

// Optioner is implemented by an experiment that takes options of its
// own (`cnperf run --parallel 4`): each is a flag of `cnperf run`, a knob a
// suite sets by name, and a value the experiment reads from Plan.Options
// and checks in its Validate. Several experiments may take one option
// (--parallel: parallel flows, and a size sweep's).
type Optioner interface {
	Options() []option.Spec
}

// Selector is implemented by an experiment that a plan selects by an
// option rather than by a workload's name: it says what, for a message
// that refuses an option it cannot take ("a --message-size sweep").
type Selector interface {
	SelectedBy() string
}

// Option is the text of option name, "" when not set.
func (p *Plan) Option(name string) string { return p.Options[name] }

// Int is option name as a number, 0 when not set (Validate has checked it).
func (p *Plan) Int(name string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(p.Options[name]))
	return n
}

// Ints is option name as a list of numbers, nil when not set.
func (p *Plan) Ints(name string) []int {
	var out []int
	for _, f := range p.List(name) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// List is option name as a comma-separated list, nil when not set.
func (p *Plan) List(name string) []string {
	var out []string
	for _, f := range strings.Split(p.Options[name], ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// OptionsOf lists the options of e (none when it takes none).
func OptionsOf(e Experiment) []option.Spec {
	if o, ok := e.(Optioner); ok {
		return o.Options()
	}
	return nil
}

// Options lists every option an experiment takes, once each (the first
// declaration's), in claiming order: `cnperf run` registers a flag for each.
func Options() []option.Spec {
	var out []option.Spec
	for _, e := range All() {
		for _, s := range OptionsOf(e) {
			if _, dup := option.Find(out, s.Name); !dup {
				out = append(out, s)
			}
		}
	}
	return out
}

// Takers says what takes option name, for messages: the measurements of
// an experiment selected like a workload (startup), else what the
// option's declaration says it applies to.
func Takers(name string) string {
	var takers []string
	for _, e := range All() {
		s, ok := option.Find(OptionsOf(e), name)
		if !ok {
			continue
		}
		if m, ok := e.(Measurer); ok {
			for n := range m.Measures() {
				takers = append(takers, n)
			}
		} else if s.AppliesTo != "" {
			takers = append(takers, s.AppliesTo)
		} else {
			takers = append(takers, "--"+e.Name())
		}
	}
	sort.Strings(takers)
	return strings.Join(slices.Compact(takers), ", ")
}

// CheckOptions checks the options of p against the shares it was split
// into. An option the user set (explicit) that no share's experiment
// takes is refused, naming what takes it; one a suite set is dropped
// there (the suite's knob for workloads the user replaced). An option
// that must stand alone (Spec.Alone) is refused beside a share that does
// not take it. It returns the options to run with.
func CheckOptions(p *Plan, shares []Share, explicit map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	names := make([]string, 0, len(p.Options))
	for n := range p.Options {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var takers, others []Share
		var spec option.Spec
		for _, sh := range shares {
			if s, ok := option.Find(OptionsOf(sh.Experiment), n); ok {
				takers, spec = append(takers, sh), s
			} else {
				others = append(others, sh)
			}
		}
		if len(takers) == 0 {
			var ok bool
			if spec, ok = option.Find(Options(), n); !ok {
				return nil, fmt.Errorf("--%s is no experiment's option", n)
			}
		}
		if spec.Alone && len(others) > 0 {
			if !explicit[n] {
				continue
			}
			sh := others[0]
			what := "the " + sh.Experiment.Name() + " experiment"
			if s, ok := sh.Experiment.(Selector); ok {
				what = s.SelectedBy()
			}
			return nil, fmt.Errorf("--%s applies to %s only, not %s (%s); drop --%s or run them separately", n, spec.AppliesTo, what, strings.Join(sh.Workloads, ","), n)
		}
		if len(takers) == 0 {
			if !explicit[n] {
				continue
			}
			return nil, fmt.Errorf("--%s applies to %s only; select one with --workloads (or its flag) or drop --%s", n, Takers(n), n)
		}
		out[n] = p.Options[n]
	}
	return out, nil
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
