// Package runner turns a plan (networks x placements x workloads, or load
// balancers x service counts) into results. It divides the plan among the
// registered experiments, which turn their share into units (a topology
// to deploy on a backend and the cells to measure in it); the scheduler
// builds them, runs every cell in interleaved rounds through the one
// measure path, records each result as it comes, and tears everything
// down, whatever happens.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/docker"
	"github.com/cnperf/cnperf/internal/backend/dockerlab"
	"github.com/cnperf/cnperf/internal/backend/kubernetes"
	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/experiment"
	_ "github.com/cnperf/cnperf/internal/experiment/all" // the experiments
	"github.com/cnperf/cnperf/internal/experiment/services"
	"github.com/cnperf/cnperf/internal/experiment/startup"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/progress"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/tuning"
	"github.com/cnperf/cnperf/internal/workload"
)

// Case is one network in one placement.
type Case = experiment.Case

// StartupName is the start-up measurement, selected like a workload.
const StartupName = startup.Name

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
	// StartupPods is how many pods the start-up measurement creates per
	// round (default 10).
	StartupPods int
	// MessageSizes, Parallel, Neighbours, AllToAllPods and Spreads are the
	// experiments' knobs (see experiment.Plan).
	MessageSizes []int
	Parallel     int
	Neighbours   string
	AllToAllPods []int
	Spreads      []string
	// Densities are the density experiment's idle pods per host.
	Densities []int
	// Tunings are --tuning's profiles (see experiment.Plan).
	Tunings []string
	// Out, when set, receives the results after every finished cell
	// (atomically, marked incomplete until the run ends).
	Out string
	// Backend deploys the units; nil is the one named by BackendName.
	Backend backend.Backend
	// BackendName picks a registered backend (Backends); "" is the lab.
	BackendName string
	// Kubernetes are the kubernetes backend's options (--kubeconfig...).
	Kubernetes kubernetes.Options
}

// backends are the backends a run can name, each made from the plan.
var backends = map[string]func(p *Plan, logf func(string, ...any)) backend.Backend{
	labbackend.Name: func(p *Plan, logf func(string, ...any)) backend.Backend {
		return labbackend.New(p.Lab, p.Agent, logf)
	},
	docker.Name: func(p *Plan, logf func(string, ...any)) backend.Backend {
		bin := ""
		if len(p.Agent) > 0 {
			bin = p.Agent[0]
		}
		return docker.New("", bin, p.Lab.ID, p.Lab.MTU, logf)
	},
	dockerlab.Name: func(p *Plan, logf func(string, ...any)) backend.Backend {
		bin := ""
		if len(p.Agent) > 0 {
			bin = p.Agent[0]
		}
		return dockerlab.New(p.Lab, bin, logf)
	},
	kubernetes.Name: func(p *Plan, logf func(string, ...any)) backend.Backend {
		return kubernetes.New(p.Kubernetes, p.Lab.ID, logf)
	},
}

// Backends lists the backends a run can name.
func Backends() []string {
	out := make([]string, 0, len(backends))
	for n := range backends {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckBackend validates a backend name, or a comma-separated list of
// them (lab,docker: the same networks on each, side by side).
func CheckBackend(name string) error {
	seen := map[string]bool{}
	for _, n := range strings.Split(name, ",") {
		if _, ok := backends[n]; !ok && name != "" {
			return fmt.Errorf("unknown backend %q; use one of %s, or several comma-separated (lab,docker)", n, strings.Join(Backends(), ", "))
		}
		if seen[n] {
			return fmt.Errorf("backend %q named twice in %q", n, name)
		}
		seen[n] = true
	}
	return nil
}

// backends makes the plan's backends: Backend, or one per name in
// BackendName (the lab when empty).
func (p *Plan) backends() []backend.Backend {
	if p.Backend != nil {
		return []backend.Backend{p.Backend}
	}
	var logf func(string, ...any)
	if p.Log != nil {
		logf = func(format string, args ...any) { fmt.Fprintf(p.Log, format+"\n", args...) }
	}
	var out []backend.Backend
	for _, n := range strings.Split(p.BackendName, ",") {
		mk := backends[n]
		if mk == nil {
			mk = backends[labbackend.Name]
		}
		out = append(out, mk(p, logf))
	}
	return out
}

func (p *Plan) backend() backend.Backend { return p.backends()[0] }

// multi is a backend standing for several: a network and placement is
// allowed where one of them allows it.
type multi []backend.Backend

func (m multi) Allows(network string, pl backend.Placement) (bool, string) {
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

func (m multi) Placements(network string) ([]backend.Placement, error) {
	var out []backend.Placement
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

// Placer is what cases are checked against: which placements a network
// has and allows.
type Placer interface {
	Allows(network string, p backend.Placement) (bool, string)
	Placements(network string) ([]backend.Placement, error)
	Check(network string) error
}

// NewBackend makes the backends the plan names, as one Placer, to check
// cases against before anything is built (Execute makes its own).
func (p *Plan) NewBackend() (Placer, error) {
	if err := CheckBackend(p.BackendName); err != nil {
		return nil, err
	}
	bs := p.backends()
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
func (m multi) Natural(network string) []backend.Placement {
	var out []backend.Placement
	for _, b := range m {
		if ps, err := b.Placements(network); err == nil && len(ps) > 0 && !slices.Contains(out, ps[0]) {
			out = append(out, ps[0])
		}
	}
	return out
}

func (p *Plan) experimentPlan() *experiment.Plan {
	return &experiment.Plan{
		Cases: p.Cases, Workloads: p.Workloads, Params: p.Params, Rounds: p.Repeat, Pin: p.Pin,
		LBs: p.LBs, Services: p.Services, StartupPods: p.StartupPods, Backend: p.backend(), Log: p.Log,
		MessageSizes: p.MessageSizes, Parallel: p.Parallel, Neighbours: p.Neighbours,
		AllToAllPods: p.AllToAllPods, Spreads: p.Spreads, Tunings: p.Tunings, Densities: p.Densities,
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
	be := multi(p.backends())
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
	ep := p.experimentPlan()
	if err := services.ValidatePlan(ep); err != nil {
		return err
	}
	if err := workload.ValidateExtra(p.Workloads, p.Params.Extra); err != nil {
		return err
	}
	if err := validateModeOptions(p.Cases, p.Lab.ModeOptions, be); err != nil {
		return err
	}
	shares, err := experiment.Split(ep)
	if err != nil {
		return err
	}
	if p.StartupPods != 0 {
		if err := experiment.CheckFlag(shares, "startup-pods"); err != nil {
			return err
		}
	}
	if err := checkExperimentFlags(ep, shares); err != nil {
		return err
	}
	if len(p.Tunings) > 0 && p.BackendName != "" && p.BackendName != labbackend.Name {
		return fmt.Errorf("--tuning tunes the lab's own namespaces; the %s backend's are not cnperf's to tune: drop --tuning or use --backend lab", p.BackendName)
	}
	for _, sh := range shares {
		if err := sh.Experiment.Validate(ep, sh.Workloads); err != nil {
			return err
		}
	}
	return p.Lab.Validate()
}

// units validates the plan and turns it into the scheduler's units, with
// the backends' names, the experiments' shares and the rounds.
func (p *Plan) units() ([]sched.Unit, []string, []experiment.Share, int, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, nil, 0, err
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
	bes := p.backends()
	phased := false // a cluster's services: one count after the other, on every backend
	for _, be := range bes {
		if s, ok := be.(backend.SharedServices); ok && s.SharedServices() {
			phased = true
		}
	}
	for _, be := range bes {
		ep := p.experimentPlan()
		ep.Backend, ep.Rounds, ep.PhasedServices = be, rounds, phased
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
			us, err := sh.Experiment.Units(ep, sh.Workloads)
			if err != nil {
				return nil, nil, nil, 0, err
			}
			units = append(units, us...)
		}
		shares = append(shares, shs...)
	}
	return units, names, shares, rounds, nil
}

// DryRun prints what the plan would build and measure, and how long it
// would take (progress.EstimatePlan), building nothing.
func DryRun(w io.Writer, p Plan) error {
	units, _, _, rounds, err := p.units()
	if err != nil {
		return err
	}
	plans := make([][]time.Duration, len(units))
	for i, u := range units {
		var cells []string
		for _, c := range u.Cells {
			plans[i] = append(plans[i], c.Planned)
			cells = append(cells, c.Name)
		}
		fmt.Fprintf(w, "%s: %s\n", u.Name, strings.Join(cells, ", "))
	}
	est := progress.EstimatePlan(plans, rounds)
	fmt.Fprintf(w, "%s, %s, %s: %s\n", progress.Count(len(units), "deployment"), progress.Count(est.Cells/rounds, "cell"), progress.Count(rounds, "round"), est)
	return nil
}

// Execute runs the plan and fills run. It returns ctx's error when cut
// short; whatever was measured until then is in run (and in p.Out). A
// p.Log that is also a sched.Tracker (a progress.Display) follows the run
// with a status line.
func Execute(ctx context.Context, p Plan, run *result.Run) error {
	units, names, shares, rounds, err := p.units()
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
	err = sched.Run(ctx, units, rounds, rec)
	finished := map[string]bool{}
	for _, sh := range shares {
		if f, ok := sh.Experiment.(experiment.Finisher); ok && !finished[sh.Experiment.Name()] {
			finished[sh.Experiment.Name()] = true
			f.Finish(run)
		}
	}
	stats.Summarize(run, report.FiguresOf)
	return err
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
	for _, name := range Backends() {
		o, ok := backends[name](&Plan{}, nil).(backend.Optioner)
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

// tuningRefused names what made an experiment claim the workloads, so a
// refusal of --tuning does not read as if tcp_stream itself were refused.
func tuningRefused(experiment string) string {
	switch experiment {
	case "sizes":
		return "a --message-size sweep"
	case "neighbours":
		return "--neighbours"
	case "parallel":
		return "--parallel flows"
	case "services":
		return "ClusterIP services (--lb, --services)"
	}
	return "the " + experiment + " experiment"
}

// checkExperimentFlags refuses an experiment's flag that no selected
// workload would use, or that another experiment's took precedence over:
// it would be silently ignored.
func checkExperimentFlags(p *experiment.Plan, shares []experiment.Share) error {
	has := func(name string) bool {
		for _, sh := range shares {
			if sh.Experiment.Name() == name {
				return true
			}
		}
		return false
	}
	switch {
	case p.Neighbours != "" && !has("neighbours"):
		return fmt.Errorf("--neighbours applies to the pair workloads (e.g. tcp_rr, tcp_stream; not rate steps, services or alltoall); select one with --workloads or drop --neighbours")
	case p.Neighbours != "" && p.Parallel > 1:
		return fmt.Errorf("--parallel cannot be combined with --neighbours yet; drop one of them (run them separately)")
	case p.Neighbours != "" && len(p.MessageSizes) > 1:
		return fmt.Errorf("a --message-size list cannot be combined with --neighbours yet; give one size (or run them separately)")
	case p.Parallel > 1 && !has("parallel") && !has("sizes"):
		return fmt.Errorf("--parallel applies to the pair workloads (e.g. tcp_rr, tcp_stream; not rate steps, services or alltoall); select one with --workloads or drop --parallel")
	case len(p.Densities) > 0 && !has("density"):
		return fmt.Errorf("--density applies to tcp_rr, tcp_crr and startup; select them with --workloads or drop --density")
	case (len(p.AllToAllPods) > 0 || len(p.Spreads) > 0) && !has("alltoall"):
		return fmt.Errorf("--pods and --spread apply to the alltoall workload; add it to --workloads or drop them")
	}
	if len(p.Tunings) > 0 {
		for _, t := range p.Tunings {
			if _, err := tuning.Get(t); err != nil {
				return err
			}
		}
		for _, sh := range shares {
			if sh.Experiment.Name() != "pairs" {
				return fmt.Errorf("--tuning measures plain pair cells (e.g. tcp_rr, tcp_stream, http_rate, as the seed-latency suite does), not %s (%s); drop --tuning or run them separately", tuningRefused(sh.Experiment.Name()), strings.Join(sh.Workloads, ","))
			}
		}
	}
	return nil
}
