// Package plan is what a run measures, assembled once: the cases
// (networks x placements, with their baseline rows), the workloads and
// their parameters, the experiments' own options, the backends and the
// load balancers, checked before anything is built. `cnperf run` builds a
// plan from its flags and a suite (Build), `cnperf recommend` from a
// profile, tests from their cases; package runner executes it.
package plan

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/experiment/services"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/workload"
)

// Case is one network in one placement.
type Case = experiment.Case

// ErrTimeLimit ends a run of a plan that reached the time limit it was
// given (cnperf run --max-time, recommend's measuring): what was measured
// is written, the lab torn down. It is here, below the commands that set
// a limit (session) and those that read it (plan/profile), so neither
// imports the other.
var ErrTimeLimit = errors.New("time limit reached")

// MaxRounds bounds --repeat.
const MaxRounds = 1000

// Plan is what a run measures.
type Plan struct {
	Cases     []Case
	Workloads []string
	Params    workload.Params // zero fields take each workload's defaults
	Lab       lab.Config
	// Repeat is the number of interleaved rounds (default 1): every cell
	// runs once per round, in an order that changes from round to round.
	Repeat int
	// Pin, when set, binds the client agent to CPU Pin[0] and the server
	// agent to CPU Pin[1] (taskset), as the studies pinned their processes;
	// tools the agents start inherit it.
	Pin []int
	// Agent is the command line that starts an agent: argv[0] is the cnperf
	// binary; "--listen ADDR --parent PID" is appended.
	Agent []string
	Log   io.Writer // progress lines; nil for none
	// LBs and Services make it a ClusterIP service run: the load balancers
	// ("none" = pod IP) and the scale steps (default 1).
	LBs      []string
	Services []int
	// Options are the experiments' own options (--parallel 4, --pods
	// 2,4,8...), as text by name; see experiment.Optioner.
	Options map[string]string
	// Explicit names the options the user set (not a suite): one no
	// selected experiment takes is refused rather than dropped.
	Explicit map[string]bool
	// Out, when set, receives the results after every finished cell
	// (atomically, marked incomplete until the run ends).
	Out string
	// Backend deploys the units; nil is the one named by BackendName.
	Backend backend.Backend
	// BackendName picks a registered backend (Backends), or several
	// comma-separated; "" is the default one (the lab).
	BackendName string
	// Named are the networks the user named (--networks), checked against
	// this machine before anything is built (CheckBuildable).
	Named []string
	// BackendFlags are the values of the backends' own flags
	// (--kubeconfig...), by name (backend.Config.Flags).
	BackendFlags map[string]string
	// BackendPlacements are the backends' own --placement values asked
	// for (cross-zone; backend.Config.Placements).
	BackendPlacements []string
}

// Backends lists the backends a run can name.
func Backends() []string { return backend.Names() }

// CheckBackend validates a backend name, or a comma-separated list of
// them (lab,docker: the same networks on each, side by side).
func CheckBackend(name string) error {
	_, err := backend.ParseList(name)
	return err
}

// config is what the plan's backends are made from.
func (p *Plan) config() backend.Config {
	c := backend.Config{Lab: p.Lab, Agent: p.Agent, Flags: p.BackendFlags, Placements: p.BackendPlacements}
	if p.Log != nil {
		c.Logf = func(format string, args ...any) { fmt.Fprintf(p.Log, format+"\n", args...) }
	}
	return c
}

// backends makes the plan's backends: Backend, or one per name in
// BackendName (the default backend when empty).
func (p *Plan) Backends() []backend.Backend {
	if p.Backend != nil {
		return []backend.Backend{p.Backend}
	}
	infos, err := backend.ParseList(p.BackendName)
	if err != nil {
		infos, _ = backend.ParseList("")
	}
	var out []backend.Backend
	for _, i := range infos {
		out = append(out, i.New(p.config()))
	}
	return out
}

func (p *Plan) backend() backend.Backend { return p.Backends()[0] }

// multi is a backend standing for several: a network and placement is
// allowed where one of them allows it.
type multi []backend.Backend

func (m multi) Allows(network string, pl ground.Placement) (bool, string) {
	var whys []string
	for _, b := range m {
		ok, why := b.Allows(network, pl)
		if ok {
			return true, ""
		}
		whys = append(whys, b.Name()+": "+why)
	}
	return false, strings.Join(whys, "; ")
}

func (m multi) Placements(network string) ([]ground.Placement, error) {
	var out []ground.Placement
	var errs []error
	for _, b := range m {
		ps, err := b.Placements(network)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Checker is a Placer that also says whether this machine can build a
// network, naming the fix.
type Checker interface {
	Placer
	Check(network string) error
}

// NewBackend makes the backends the plan names, as one Placer, to check
// cases against before anything is built (Execute makes its own).
func (p *Plan) NewBackend() (Checker, error) {
	if err := CheckBackend(p.BackendName); err != nil {
		return nil, err
	}
	bs := p.Backends()
	if len(bs) == 1 {
		return bs[0], nil
	}
	return multiChecker{multi(bs)}, nil
}

type multiChecker struct{ multi }

// Check passes where one of the backends that has network can build it.
func (m multiChecker) Check(network string) error {
	var errs []error
	for _, b := range m.multi {
		if _, err := b.Placements(network); err != nil {
			errs = append(errs, err)
			continue // not one of its networks
		}
		err := b.Check(network)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Natural is each backend's preferred placement of network: run without
// --placement, every backend runs it where it prefers.
func (m multi) Natural(network string) []ground.Placement {
	var out []ground.Placement
	for _, b := range m {
		if ps, err := b.Placements(network); err == nil && len(ps) > 0 && !slices.Contains(out, ps[0]) {
			out = append(out, ps[0])
		}
	}
	return out
}

// ExperimentPlan is the plan as the experiments see it, on backend be
// (nil: the first of the plan's).
func (p *Plan) ExperimentPlan(be backend.Backend) *experiment.Plan {
	if be == nil {
		be = p.backend()
	}
	return &experiment.Plan{
		Cases: p.Cases, Workloads: p.Workloads, Params: p.Params, Rounds: p.Repeat, Pin: p.Pin,
		LBs: p.LBs, Services: p.Services, Backend: be, Log: p.Log, Options: p.Options,
	}
}

// Validate checks a plan before anything is built.
func (p *Plan) Validate() error {
	if len(p.Cases) == 0 {
		return errors.New("nothing to run: no network selected; name one with --networks (see cnperf networks)")
	}
	if len(p.Workloads) == 0 {
		return errors.New("nothing to run: no workload selected; name one with --workloads (see cnperf workloads)")
	}
	be := multi(p.Backends())
	for _, c := range p.Cases {
		if ok, why := be.Allows(c.Network, c.Placement); !ok {
			if _, err := be.Placements(c.Network); err != nil {
				return err
			}
			return fmt.Errorf("%s cannot run %s: %s", c.Network, c.Placement, why)
		}
	}
	if len(p.Pin) != 0 && len(p.Pin) != 2 {
		return fmt.Errorf("pin wants two CPUs (client, server), got %v; give two, e.g. --pin 0,1", p.Pin)
	}
	for _, c := range p.Pin {
		if c < 0 || c >= runtime.NumCPU() {
			return fmt.Errorf("cannot pin to CPU %d: this machine has CPUs 0 to %d; choose two of them", c, runtime.NumCPU()-1)
		}
	}
	if p.Repeat < 0 || p.Repeat > MaxRounds {
		return fmt.Errorf("repeat %d; use 1 to %d", p.Repeat, MaxRounds)
	}
	ep := p.ExperimentPlan(nil)
	if err := services.ValidatePlan(ep); err != nil {
		return err
	}
	if err := workload.ValidateExtra(p.Workloads, p.Params.Extra); err != nil {
		return err
	}
	if err := validateModeOptions(p.Cases, p.Lab.ModeOptions, be); err != nil {
		return err
	}
	if err := checkOptionValues(p.Options); err != nil {
		return err
	}
	shares, err := experiment.Split(ep)
	if err != nil {
		return err
	}
	if p.Options, err = experiment.CheckOptions(ep, shares, p.Explicit); err != nil {
		return err
	}
	ep.Options = p.Options
	if len(p.Options[pairs.Tuning.Name]) > 0 {
		for _, b := range p.Backends() {
			if !backend.Has(b, backend.Tuning) {
				return fmt.Errorf("--tuning tunes the lab's own namespaces; the %s backend's are not cnperf's to tune: drop --tuning or use --backend lab", b.Name())
			}
		}
	}
	for _, sh := range shares {
		if err := sh.Experiment.Validate(ep, sh.Workloads); err != nil {
			return err
		}
	}
	return p.Lab.Validate()
}

// validateModeOptions checks --mode-opt against the networks selected: a
// key no selected network takes (as a network mode, or as a backend that
// runs it takes for it: docker-lab's userland-proxy), or a value malformed
// for one that takes it, is an error naming the networks that do; each
// network is then built with the keys it declares only. A backend's
// options are also checked against this machine (a kernel feature one
// needs): bad input, refused before anything is built.
func validateModeOptions(cases []Case, opts map[string]string, bes []backend.Backend) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// the option specs a network takes, from its mode and from every
	// backend that runs it
	specsOf := func(c Case) ([]option.Spec, error) {
		m, err := netmode.Get(c.Network)
		if err != nil {
			return nil, err
		}
		specs := netmode.OptionsOf(m)
		for _, b := range bes {
			if o, ok := b.(backend.Optioner); ok {
				if allowed, _ := b.Allows(c.Network, c.Placement); allowed {
					specs = append(specs[:len(specs):len(specs)], o.Options(c.Network)...)
				}
			}
		}
		return specs, nil
	}
	for _, k := range keys {
		var takers []string
		seen := map[string]bool{}
		for _, c := range cases {
			if seen[c.Network] {
				continue
			}
			seen[c.Network] = true
			specs, err := specsOf(c)
			if err != nil {
				return err
			}
			s, ok := option.Find(specs, k)
			if !ok {
				continue
			}
			if err := s.Check(opts[k]); err != nil {
				return fmt.Errorf("--mode-opt on %s: %w", c.Network, err)
			}
			takers = append(takers, c.Network)
		}
		if len(takers) == 0 {
			var all []string
			for _, n := range netmode.Names() {
				m, _ := netmode.Get(n)
				if _, ok := option.Find(netmode.OptionsOf(m), k); ok {
					all = append(all, n)
				}
			}
			all = append(all, backendsTaking(k)...)
			if len(all) == 0 {
				return fmt.Errorf("--mode-opt %q: no network takes %q; `cnperf networks -v` lists each network's options", k+"="+opts[k], k)
			}
			return fmt.Errorf("--mode-opt %q: none of the selected networks takes %q (it is an option of %s); select one of them or drop it", k+"="+opts[k], k, strings.Join(all, ", "))
		}
	}
	for _, c := range cases {
		for _, b := range bes {
			o, ok := b.(backend.Optioner)
			if !ok {
				continue
			}
			if allowed, _ := b.Allows(c.Network, c.Placement); allowed {
				if err := o.CheckOptions(c.Network, opts); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// backendsTaking lists, as backend:network, where a backend takes option
// key for a network of its own (docker-lab:nat for userland-proxy).
func backendsTaking(key string) []string {
	var out []string
	for _, i := range backend.All() {
		name := i.Name
		o, ok := i.New(backend.Config{}).(backend.Optioner)
		if !ok {
			continue
		}
		for _, n := range netmode.Names() {
			if _, ok := option.Find(o.Options(n), key); ok {
				out = append(out, name+":"+n)
			}
		}
	}
	return out
}

// serves says whether b serves load balancer lb: as it says
// (backend.LBServer), or else cnperf's replicas and the pod IP.
func serves(b backend.Backend, lb string) bool {
	if s, ok := b.(backend.LBServer); ok {
		return s.ServesLB(lb)
	}
	return lb == svc.None || slices.Contains(svc.Names(), lb)
}

// CheckLBs refuses a load balancer no backend of backendName serves
// (a cluster's own proxy on the lab, cnperf's replicas on a cluster
// alone), naming where it is served and what is served here.
func CheckLBs(lbs []string, backendName string) error {
	p := Plan{BackendName: backendName}
	bes := p.Backends()
	var names []string
	for _, b := range bes {
		names = append(names, b.Name())
	}
	for _, lb := range lbs {
		if slices.ContainsFunc(bes, func(b backend.Backend) bool { return serves(b, lb) }) {
			continue
		}
		var by []string
		for _, i := range backend.All() {
			if serves(i.New(backend.Config{}), lb) {
				by = append(by, i.Name)
			}
		}
		var here []string
		for _, l := range append([]string{svc.ClusterProxy, svc.None}, svc.Names()...) {
			if slices.ContainsFunc(bes, func(b backend.Backend) bool { return serves(b, l) }) {
				here = append(here, l)
			}
		}
		if len(by) == 0 {
			return fmt.Errorf("--lb %s: no backend serves it; use one of %s", lb, strings.Join(here, ", "))
		}
		return fmt.Errorf("--lb %s is served by --backend %s; use it there, or on --backend %s use --lb %s", lb, OrList(by), strings.Join(names, ","), OrList(here))
	}
	return nil
}

// OrList joins names as "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
