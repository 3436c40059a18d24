package plan

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/workload"
)

// Request is what a run asks for, as `cnperf run`'s flags give it (or
// recommend, from a profile): an empty field takes the suite's value.
type Request struct {
	Suite string // "" is the default suite
	// SuiteDef, when set, is the suite itself (a scenario file's suite
	// written out), instead of the one Suite names.
	SuiteDef *suite.Suite
	Quick    bool // the suite's short version
	// Backend names the backends ("" the default one); BackendFlags are
	// their own flags the user set (--kubeconfig...).
	Backend      string
	BackendFlags map[string]string
	// Networks, Workloads and Placements are comma-separated, as given.
	Networks, Workloads, Placements string
	NoBaseline                      bool
	Duration                        time.Duration
	// MessageSize is one size (every workload's) or a list (a sweep).
	MessageSize string
	Direction   string
	MTU         int
	Repeat      int
	// Options are the experiments' options the user set, by name.
	Options map[string]string
	// Extra are the workloads' own flags the user set, by name.
	Extra       map[string]string
	ModeOptions map[string]string
	// LBs and Services are --lb and --services, comma-separated.
	LBs, Services string
	Pin           string // "client,server" CPUs
	Agent         []string
}

// SplitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Build turns a request into a checked plan. It builds and writes
// nothing.
func Build(r Request) (*Plan, error) {
	st, err := suite.Get(cmp.Or(r.Suite, "default"))
	if r.SuiteDef != nil {
		st, err = *r.SuiteDef, nil
	}
	if err != nil {
		return nil, err
	}
	if r.Quick {
		st = st.Quick()
	}
	st = workloadOptions(st)
	infos, err := backend.ParseList(r.Backend)
	if err != nil {
		return nil, err
	}
	flagValues, err := BackendFlags(infos, r.BackendFlags, "")
	if err != nil {
		return nil, err
	}
	placements, own, err := takePlacements(infos, SplitList(r.Placements))
	if err != nil {
		return nil, err
	}
	p := &Plan{BackendName: r.Backend, Agent: r.Agent, BackendFlags: flagValues, BackendPlacements: own, Named: SplitList(r.Networks)}
	be, err := p.NewBackend()
	if err != nil {
		return nil, err
	}
	// the suites name the lab's networks: a run elsewhere names its own,
	// or takes its backend's
	suiteNets := !slices.ContainsFunc(infos, func(i backend.Info) bool { return !i.Has(backend.LabNetworks) })
	defaultNets := len(infos) == 1 && len(infos[0].DefaultNetworks) > 0 && r.Networks == ""
	p.Cases = st.Cases
	if r.Networks != "" || r.Placements != "" || !suiteNets {
		nets := SplitList(r.Networks)
		if defaultNets {
			nets = infos[0].DefaultNetworks
		}
		if len(nets) == 0 && !suiteNets {
			return nil, fmt.Errorf("--backend %s: name the networks to run, e.g. --networks bridge,host,nat", r.Backend)
		}
		if p.Cases, err = Cases(be, nets, placements, r.NoBaseline); err != nil {
			return nil, err
		}
	}
	p.Workloads = st.Workloads
	if r.Workloads != "" {
		p.Workloads = SplitList(r.Workloads)
	}
	p.Params = st.Params
	if r.Duration != 0 {
		p.Params.Duration = r.Duration
	}
	// the experiments' options: the suite's, then the user's
	p.Options, p.Explicit = maps.Clone(st.Options), map[string]bool{}
	if p.Options == nil {
		p.Options = map[string]string{}
	}
	specs := experiment.Options()
	for k, v := range r.Options {
		if s, _ := option.Find(specs, k); v != "" && v != s.Default { // --parallel 1 is the default: one flow
			p.Options[k], p.Explicit[k] = v, true
		}
	}
	// an option that must stand alone (--tuning) is the suite's for its
	// own workloads only
	if r.Workloads != "" {
		for k := range st.Options {
			if s, _ := option.Find(specs, k); s.Alone && !p.Explicit[k] {
				delete(p.Options, k)
			}
		}
	}
	// one message size is every workload's; a list is a sweep
	sizes, err := positiveInts("message-size", r.MessageSize, "64,1024,65536")
	if err != nil {
		return nil, err
	}
	switch {
	case len(sizes) == 1:
		p.Params.MessageSize = sizes[0]
		delete(p.Options, "message-size")
	case len(sizes) > 1:
		p.Options["message-size"], p.Explicit["message-size"] = r.MessageSize, true
	}
	if r.Direction != "" {
		p.Params.Direction = r.Direction
		if err := directionApplies(p.Workloads); err != nil {
			return nil, err
		}
	}
	p.Params.Extra = maps.Clone(st.Params.Extra)
	for name, v := range r.Extra {
		if v != "" {
			if p.Params.Extra == nil {
				p.Params.Extra = map[string]string{}
			}
			p.Params.Extra[name] = v
		}
	}
	p.Lab = lab.Config{MTU: cmp.Or(r.MTU, 1500), Underlay: netip.MustParsePrefix("10.100.0.0/24"), ModeOptions: r.ModeOptions}
	if p.Lab.ModeOptions == nil {
		p.Lab.ModeOptions = map[string]string{}
	}
	p.Repeat = cmp.Or(r.Repeat, st.Rounds)
	if err := CheckLBs(SplitList(r.LBs), r.Backend); err != nil {
		return nil, err
	}
	if err := p.applyServices(st, r.LBs, r.Services, r.Networks != "" || defaultNets); err != nil {
		return nil, err
	}
	if err := CheckLBs(p.LBs, r.Backend); err != nil {
		return nil, err
	}
	for _, f := range SplitList(r.Pin) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("--pin %q: want two CPU numbers, e.g. --pin 0,1", r.Pin)
		}
		p.Pin = append(p.Pin, n)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// workloadOptions moves the workloads' options a suite sets (in its
// Options, by flag name) to its parameters, where the workloads' flags
// land; the experiments' stay.
func workloadOptions(st suite.Suite) suite.Suite {
	moved := false
	for _, f := range workload.Flags() {
		v, ok := st.Options[f.Name]
		if !ok {
			continue
		}
		if !moved {
			st.Options, st.Params.Extra, moved = maps.Clone(st.Options), maps.Clone(st.Params.Extra), true
			if st.Params.Extra == nil {
				st.Params.Extra = map[string]string{}
			}
		}
		st.Params.Extra[f.Name] = v
		delete(st.Options, f.Name)
	}
	return st
}

// takePlacements replaces the backends' own --placement values
// (cross-zone) by the placements they run as, returning those asked for;
// one is refused unless every selected backend has it.
func takePlacements(infos []backend.Info, placements []string) (out, own []string, err error) {
	for _, name := range placements {
		as, help, owners := ground.Placement(name), "", []string(nil)
		for _, i := range backend.All() {
			for _, e := range i.Placements {
				if e.Name == name {
					as, help, owners = e.As, e.Help, append(owners, i.Name)
				}
			}
		}
		if owners != nil {
			for _, i := range infos {
				if !slices.Contains(owners, i.Name) {
					return nil, nil, fmt.Errorf("--placement %s %s; use it with --backend %s alone", name, help, OrList(owners))
				}
			}
			if !slices.Contains(own, name) {
				own = append(own, name)
			}
		}
		if !slices.Contains(out, string(as)) {
			out = append(out, string(as))
		}
	}
	return out, own, nil
}

// PlacementUsage is --placement's help: the placements every backend
// knows, then the backends' own.
func PlacementUsage() string {
	s := "same-pod, same-host or cross-host, comma-separated (default: each network's natural one)"
	for _, i := range backend.All() {
		for _, e := range i.Placements {
			s += fmt.Sprintf("; --backend %s also %s (%s: %s)", i.Name, e.Name, e.As, e.Help)
		}
	}
	return s
}

// BackendFlags checks the backends' own flags the user set (a flag of a
// backend not selected is refused; verb is "clean " for clean's) and
// returns every flag's value of the selected backends, defaults
// included, checked by their backends (a run's only).
func BackendFlags(infos []backend.Info, set map[string]string, verb string) (map[string]string, error) {
	values := map[string]string{}
	for _, i := range infos {
		for _, f := range i.Flags {
			values[f.Name] = f.Default
		}
	}
	names := slices.Sorted(maps.Keys(set))
	for _, n := range names {
		if _, ok := values[n]; ok {
			values[n] = set[n]
			continue
		}
		var owners []string
		for _, i := range backend.All() {
			if _, ok := option.Find(i.Flags, n); ok {
				owners = append(owners, i.Name)
			}
		}
		if len(owners) == 0 {
			return nil, fmt.Errorf("--%s is no backend's flag", n)
		}
		return nil, fmt.Errorf("--%s applies to %s--backend %s; drop it or add --backend %s", n, verb, OrList(owners), owners[0])
	}
	if verb != "" {
		return values, nil
	}
	for _, i := range infos {
		if i.CheckFlags != nil {
			if err := i.CheckFlags(values); err != nil {
				return nil, err
			}
		}
	}
	return values, nil
}

// applyServices turns --lb and --services (or the suite's) into a services
// plan. A load balancer the user named must be able to run here.
func (p *Plan) applyServices(st suite.Suite, lbs, counts string, networksGiven bool) error {
	p.LBs, p.Services = st.LBs, st.Services
	if lbs != "" {
		p.LBs = SplitList(lbs)
		for _, name := range p.LBs {
			if name == svc.None || name == svc.ClusterProxy {
				continue
			}
			lb, err := svc.New(name)
			if err != nil {
				return err
			}
			if err := svc.Check(lb); err != nil {
				return err
			}
		}
	}
	if counts != "" {
		p.Services = nil
		for _, f := range SplitList(counts) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("--services %q: use numbers, e.g. --services 1,100,1000,10000", f)
			}
			p.Services = append(p.Services, n)
		}
	}
	if len(p.LBs) == 0 {
		if len(p.Services) > 0 {
			return fmt.Errorf("--services needs --lb (e.g. --lb iptables,ebpf-socket)")
		}
		return nil
	}
	if lbs != "" && len(st.LBs) == 0 && !networksGiven {
		p.Cases = []Case{{Network: suite.DefaultServiceNetwork, Placement: ground.CrossHost}}
	}
	// Baseline rows are added for ratios between networks; a services run
	// compares load balancers on one network and baseline has no pods.
	var cases []Case
	for _, c := range p.Cases {
		if c.Network != result.BaselineNetwork {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("services need a pod network; name one with --networks (e.g. %s)", suite.DefaultServiceNetwork)
	}
	p.Cases = cases
	if len(st.LBs) == 0 && slices.Equal(p.Workloads, st.Workloads) {
		p.Workloads = suite.ServiceWorkloads()
	}
	return nil
}

// positiveInts parses a comma-separated list of positive numbers given
// to --name ("" is none).
func positiveInts(name, s, eg string) ([]int, error) {
	var out []int
	for _, f := range SplitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--%s %q: %s must be positive numbers, e.g. --%s %s", name, f, strings.ReplaceAll(name, "-", " "), name, eg)
		}
		out = append(out, n)
	}
	return out, nil
}

// checkOptionValues checks the experiments' options against their
// declared kinds, as flags: a malformed value names the option and a good
// one.
func checkOptionValues(opts map[string]string) error {
	specs := experiment.Options()
	for _, n := range slices.Sorted(maps.Keys(opts)) {
		s, ok := option.Find(specs, n)
		if !ok {
			return fmt.Errorf("--%s is no experiment's option; `cnperf run -h` lists them", n)
		}
		v := opts[n]
		switch s.Kind {
		case option.Ints:
			if _, err := positiveInts(n, v, s.Example); err != nil {
				return err
			}
		case option.Int:
			if _, err := strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("--%s %q: want a whole number, e.g. --%s %s", n, v, n, s.Example)
			}
		default:
			if err := s.Check(v); err != nil {
				return fmt.Errorf("--%s: %w", n, err)
			}
		}
	}
	return nil
}

// directionApplies refuses --direction when no selected workload has one
// (it would be silently ignored), naming those that do.
func directionApplies(wls []string) error {
	for _, n := range wls {
		if w, err := workload.Get(n); err == nil && workload.IsBulk(w) {
			return nil
		}
	}
	var takers []string
	for _, n := range workload.Names() {
		if w, _ := workload.Get(n); workload.IsBulk(w) {
			takers = append(takers, n)
		}
	}
	return fmt.Errorf("--direction applies to %s; select one of them or drop --direction", strings.Join(takers, ", "))
}

// Infos are the registrations of the plan's backends.
func (p *Plan) Infos() []backend.Info {
	infos, err := backend.ParseList(p.BackendName)
	if err != nil {
		return nil
	}
	return infos
}

// BuildsHere says whether a backend of the plan builds on this machine
// (it then needs root and the lab's tools).
func (p *Plan) BuildsHere() bool {
	if p.Backend != nil {
		return backend.Has(p.Backend, backend.BuildsHere)
	}
	return slices.ContainsFunc(p.Infos(), func(i backend.Info) bool { return i.Has(backend.BuildsHere) })
}

// CheckBuildable checks, before anything is built, that this machine can
// build the networks the user named (or, on backends that do not build
// the lab's networks, every network of the plan): in a comparison a
// network it cannot build is skipped with the reason shown (the runner
// records it); when none can be built, that is an error.
func (p *Plan) CheckBuildable() error {
	infos := p.Infos()
	labNets := !slices.ContainsFunc(infos, func(i backend.Info) bool { return !i.Has(backend.LabNetworks) })
	named := p.Named
	if len(named) == 0 && !labNets {
		for _, c := range p.Cases {
			if !slices.Contains(named, c.Network) {
				named = append(named, c.Network)
			}
		}
	}
	if len(named) == 0 {
		return nil
	}
	check := func(n string) error {
		m, _ := netmode.Get(n)
		return netmode.Check(m)
	}
	if !labNets {
		be, err := p.NewBackend()
		if err != nil {
			return err
		}
		check = be.Check
	}
	var firstErr error
	for _, n := range named {
		err := check(n)
		if err == nil {
			return nil
		}
		firstErr = cmp.Or(firstErr, err)
	}
	if firstErr == nil {
		return errors.New("no network to build")
	}
	return firstErr
}

// The flags of `cnperf run` that take a list, and those where 0 would
// mean the default, with a good value each.
var (
	listFlags = map[string]string{"networks": "host,vxlan", "workloads": "tcp_rr,tcp_stream", "placement": "cross-host",
		"lb": "iptables,ebpf-socket", "services": "1,10000", "pin": "0,1"}
	zeroFlags = map[string]string{"duration": "5s", "message-size": "1024", "repeat": "3", "mtu": "1500"}
)

// CheckExplicit refuses what a user typed (set: every flag given, by
// name) that would silently mean something else: a list given with no
// item in it (--networks ,), a zero that would mean the default
// (--duration 0, --repeat 0), an empty value. The experiments' options
// are judged by their declared kind.
func CheckExplicit(set map[string]string) error {
	specs := experiment.Options()
	for _, n := range slices.Sorted(maps.Keys(set)) {
		if n == "mode-opt" {
			continue
		}
		v := set[n]
		list, isList := listFlags[n]
		zero, isZero := zeroFlags[n]
		if s, ok := option.Find(specs, n); ok && !isList && !isZero {
			switch s.Kind {
			case option.List, option.Ints:
				list, isList = s.Example, true
			case option.Int:
				zero, isZero = s.Example, true
			}
		}
		switch {
		case isList && len(SplitList(v)) == 0:
			return fmt.Errorf("--%s %q names nothing; give at least one, e.g. --%s %s, or leave it out for the default", n, v, n, list)
		case !isList && strings.TrimSpace(v) == "":
			return fmt.Errorf("--%s %q is empty; give a value (see `cnperf run -h`) or leave it out for the default", n, v)
		case isZero && (v == "0" || v == "0s"):
			return fmt.Errorf("--%s 0: use a positive value, e.g. --%s %s, or leave it out for the default", n, n, zero)
		}
	}
	return nil
}

// FlagsOfBackends registers every backend's own flags (--kubeconfig...)
// on fs, once each (with clean, only those clean takes), and returns
// where their values land.
func FlagsOfBackends(fs *flag.FlagSet, clean bool) map[string]*string {
	out := map[string]*string{}
	for _, i := range backend.All() {
		for _, f := range i.Flags {
			if _, dup := out[f.Name]; dup || (clean && !slices.Contains(i.CleanFlags, f.Name)) {
				continue
			}
			if f.Kind == option.List { // repeatable: the values joined
				v := &listFlag{s: f.Default}
				fs.Var(v, f.Name, f.Help)
				out[f.Name] = &v.s
				continue
			}
			out[f.Name] = fs.String(f.Name, f.Default, f.Help)
		}
	}
	return out
}

// listFlag is a backend's list flag: given twice, its values are joined
// with a comma (--tolerate a:NoSchedule --tolerate b:NoSchedule).
type listFlag struct {
	s   string
	set bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return l.s
}

func (l *listFlag) Set(v string) error {
	if l.set && l.s != "" && v != "" {
		v = l.s + "," + v
	}
	l.s, l.set = v, true
	return nil
}

// CleanUsage is clean's --backend help: what each backend's cleaner removes.
func CleanUsage() string {
	var help []string
	for _, i := range backend.All() {
		if i.Cleaner != nil {
			help = append(help, i.Name+" ("+i.CleanSummary+")")
		}
	}
	return strings.Join(help, ", ")
}

// Cleaner is the registration of the backend clean --backend names, with
// its flags' values (set: those the user gave; one of another backend is
// refused).
func Cleaner(name string, set map[string]string) (backend.Info, map[string]string, error) {
	info, err := backend.Get(name)
	if err != nil || info.Cleaner == nil {
		var names []string
		for _, i := range backend.All() {
			if i.Cleaner != nil {
				names = append(names, i.Name)
			}
		}
		return info, nil, fmt.Errorf("clean --backend %q: use %s", name, OrList(names))
	}
	values, err := BackendFlags([]backend.Info{info}, set, "clean ")
	return info, values, err
}

// FlagsOfExperiments registers a flag for every experiment's option not
// registered yet (--parallel, --pods...), and returns where they land.
func FlagsOfExperiments(fs *flag.FlagSet) map[string]*string {
	out := map[string]*string{}
	for _, o := range experiment.Options() {
		if fs.Lookup(o.Name) == nil {
			out[o.Name] = fs.String(o.Name, "", o.Help)
		}
	}
	return out
}

// FlagsOfWorkloads registers a flag for every workload's option (a switch
// for a bool), and returns where they land.
func FlagsOfWorkloads(fs *flag.FlagSet) map[string]*string {
	out := map[string]*string{}
	for _, f := range workload.Flags() {
		out[f.Name] = option.FlagVar(fs, f.Name, f.Usage, f.Bool)
	}
	return out
}
