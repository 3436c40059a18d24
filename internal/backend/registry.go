package backend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/registry"
)

// Capability is something not every backend can do. The run and the
// experiments ask for a capability, never for a backend by its name or
// type, so a new backend is one folder and one line in backend/all.
type Capability string

// The capabilities.
const (
	// BuildsHere: the backend builds on this machine (namespaces,
	// processes, a local engine), so a run on it needs root and the lab's
	// tools (ip), checked before anything is built.
	BuildsHere Capability = "builds-here"
	// LabNetworks: it builds every network mode of package netmode under
	// its own name, as the suites name them, and checks them as the
	// modes do (netmode.Check); a run on a backend without it names its
	// networks or takes the backend's DefaultNetworks.
	LabNetworks Capability = "lab-networks"
	// Tuning: it applies a host-tuning profile inside its namespaces
	// (Topology.Tuning).
	Tuning Capability = "tuning"
	// LocalLabs: every deployment is a local lab this process built
	// (package lab), reachable through LocalLab: an experiment may add
	// links and rules of its own between them.
	LocalLabs Capability = "local-labs"
)

// LocalLab is implemented by deployments that are a local lab (the
// LocalLabs capability).
type LocalLab interface {
	LocalLab() *lab.Lab
}

// Config is what a backend is made from.
type Config struct {
	// Lab is the base lab config: the underlay (MTU), the run id, the
	// network-mode options.
	Lab lab.Config
	// Agent is the argv that starts an agent: argv[0] is the cnperf
	// binary.
	Agent []string
	// Flags are the values of the backend's own flags (Info.Flags), by
	// name; a flag not set has its declared default.
	Flags map[string]string
	// Logf receives progress lines; nil for none.
	Logf func(format string, args ...any)
	// Placements are the backend's own --placement values the run asked
	// for (Info.Placements' names), each run as its As placement.
	Placements []string
}

// Binary is the cnperf binary of the agent argv ("" when none).
func (c Config) Binary() string {
	if len(c.Agent) > 0 {
		return c.Agent[0]
	}
	return ""
}

// Flag is the value of flag name of the backend's, or its default.
func (c Config) Flag(specs []option.Spec, name string) string {
	return option.Get(specs, c.Flags, name)
}

// Info registers a backend: how to make it, what it takes and can do.
type Info struct {
	Name string
	// Summary says in a few words where the pods run, for --backend's help.
	Summary string
	// Rank orders the backends in listings (lower first; the default
	// backend is 0).
	Rank int
	Caps []Capability
	// RootFor says why a backend that builds here needs root, as the
	// error a user who is not root gets: "needs root" + RootFor.
	RootFor string
	// Flags are the `cnperf run` flags the backend takes (--kubeconfig):
	// a run that sets one without selecting the backend is refused.
	Flags []option.Spec
	// CleanFlags names those of Flags `cnperf clean` takes too.
	CleanFlags []string
	// CheckFlags checks the flags' values (every flag of Flags, set or
	// default) before anything is contacted; nil checks nothing.
	CheckFlags func(values map[string]string) error
	// Placements are --placement values the backend adds (cross-zone):
	// each runs as a placement every backend knows, the backend told
	// through Config.Placements.
	Placements []ExtraPlacement
	// DefaultNetworks are measured when a run names none and the backend
	// cannot build the suites' networks (no LabNetworks).
	DefaultNetworks []string
	// New makes the backend.
	New func(Config) Backend
	// Cleaner removes what dead runs left on it; CleanSummary says what,
	// for clean's --backend help.
	Cleaner      cleanup.Cleaner
	CleanSummary string
}

// ExtraPlacement is a --placement value a backend adds.
type ExtraPlacement struct {
	Name string
	// As is the placement the cases run as (cross-host).
	As ground.Placement
	// Help says what it chooses, for --placement's help and the error a
	// run on another backend gets ("chooses nodes of two zones of a
	// cluster").
	Help string
}

// Has says whether the backend has capability c.
func (i Info) Has(c Capability) bool { return slices.Contains(i.Caps, c) }

var backends = registry.New[Info]("backend", "use one of them, or several comma-separated (lab,docker)")

// Register adds a backend; call it from the backend package's init.
func Register(i Info) { backends.Register(i.Name, i) }

// Get finds a registered backend.
func Get(name string) (Info, error) { return backends.Get(name) }

// Names lists the registered backends, by rank then name.
func Names() []string {
	names := backends.Names()
	slices.SortStableFunc(names, func(a, b string) int {
		x, _ := backends.Get(a)
		y, _ := backends.Get(b)
		return x.Rank - y.Rank
	})
	return names
}

// All lists the registered backends, as Names orders them.
func All() []Info {
	var out []Info
	for _, n := range Names() {
		i, _ := backends.Get(n)
		out = append(out, i)
	}
	return out
}

// Has says whether b, a registered backend, has capability c; a backend
// not registered (a test's) has none.
func Has(b Backend, c Capability) bool {
	if b == nil {
		return false
	}
	i, err := backends.Get(b.Name())
	return err == nil && i.Has(c)
}

// ParseList checks a backend name, or a comma-separated list of them
// (lab,docker: the same networks on each, side by side), and returns their
// registrations; "" is the default backend (rank 0).
func ParseList(s string) ([]Info, error) {
	if s == "" {
		all := All()
		if len(all) == 0 {
			return nil, fmt.Errorf("no backend registered")
		}
		return all[:1], nil
	}
	var out []Info
	seen := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		i, err := backends.Get(n)
		if err != nil {
			return nil, fmt.Errorf("unknown backend %q;%s use one of %s, or several comma-separated (lab,docker)", n, registry.Suggest(n, Names()), strings.Join(Names(), ", "))
		}
		if seen[n] {
			return nil, fmt.Errorf("backend %q named twice in %q", n, s)
		}
		seen[n] = true
		out = append(out, i)
	}
	return out, nil
}

// Usage is --backend's help: every backend with its summary.
func Usage() string {
	var parts []string
	for _, i := range All() {
		parts = append(parts, i.Name+" ("+i.Summary+")")
	}
	return "where the pods run: " + strings.Join(parts, ", ") + "; several side by side: lab,docker-lab"
}
