// Package suite holds named presets: a study's comparison as one command
// (`cnperf run --suite NAME`). A preset is data: the cases, workloads and
// parameters a run would otherwise take from flags; flags the user gives
// still override it. The built-in suites are YAML files embedded from
// scenarios/ (each a scenario file whose suite is written out, as `cnperf
// suites --show NAME` prints it); Parse reads that format.
package suite

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/workload"
)

// Suite is one preset.
type Suite struct {
	Name      string
	Summary   string
	Source    string // the study it reproduces
	Cases     []experiment.Case
	Workloads []string
	Params    workload.Params
	LBs       []string // ClusterIP load balancers (a services run), see plan.Plan
	Services  []int    // service-count scale steps
	// Options set the experiments' and the workloads' own options by
	// name, as their flags would ("message-size": "64,1024", "neighbours":
	// "busy:5", "tuning": "none,study", "server": "nginx"); the flags
	// override them. An experiment's option no experiment of the run
	// takes (the user chose other workloads) is dropped.
	Options map[string]string
	// Rounds is how many interleaved rounds the suite runs by default
	// (--repeat overrides it); 0 means 1.
	Rounds int
	// Short is the suite's quick: block, what its --quick version changes:
	// a field set there replaces the suite's (options by name): fewer
	// rounds, sizes, pods, networks and shorter cells, the same
	// experiment, under two minutes on a 2-CPU machine. Nil: one round of
	// 1 s cells.
	Short *Suite
}

// Quick is the suite's --quick version: flags the user gives still
// override it.
func (s Suite) Quick() Suite {
	q := s
	q.Cases = slices.Clone(s.Cases)
	q.Params.Extra = maps.Clone(s.Params.Extra)
	q.Options = maps.Clone(s.Options)
	if q.Options == nil {
		q.Options = map[string]string{}
	}
	q.Summary, q.Short = "(quick) "+s.Summary, nil
	o := s.Short
	if o == nil {
		q.Params.Duration, q.Rounds = time.Second, 1
		return q
	}
	if o.Cases != nil {
		q.Cases = slices.Clone(o.Cases)
	}
	if o.Workloads != nil {
		q.Workloads = slices.Clone(o.Workloads)
	}
	if o.LBs != nil {
		q.LBs = slices.Clone(o.LBs)
	}
	if o.Services != nil {
		q.Services = slices.Clone(o.Services)
	}
	if o.Params.Duration != 0 {
		q.Params.Duration = o.Params.Duration
	}
	if o.Params.MessageSize != 0 {
		q.Params.MessageSize = o.Params.MessageSize
		delete(q.Options, "message-size")
	}
	if o.Rounds != 0 {
		q.Rounds = o.Rounds
	}
	for k, v := range o.Options {
		q.Options[k] = v
		if k == "message-size" {
			q.Params.MessageSize = 0 // a sweep replaces the one size
		}
	}
	return q
}

var reg = registry.New[Suite]("suite", "`cnperf suites` lists them")

// Register adds a preset; duplicates panic (a programming error).
func Register(s Suite) { load(); reg.Register(s.Name, s) }

// Get finds a preset or says which exist.
func Get(name string) (Suite, error) { load(); return reg.Get(name) }

// Names lists the presets, sorted.
func Names() []string { load(); return reg.Names() }

//go:embed scenarios/*.yaml
var files embed.FS

var loaded sync.Once

// load registers the embedded suites, once, when a suite is first asked
// for (by then every experiment and workload is registered). A file that
// does not read is a programming error: the package's tests read them all.
func load() {
	loaded.Do(func() {
		ents, err := files.ReadDir("scenarios")
		if err != nil {
			panic(err)
		}
		for _, e := range ents {
			name := strings.TrimSuffix(e.Name(), ".yaml")
			b, _ := files.ReadFile("scenarios/" + e.Name())
			s, err := ParseFile("internal/suite/scenarios/"+e.Name(), b, nil)
			if err != nil {
				panic(err)
			}
			if s.Name != name {
				panic(fmt.Sprintf("suite file %s names the suite %q", e.Name(), s.Name))
			}
			reg.Register(s.Name, s)
		}
	})
}

// File is the embedded scenario file of a built-in suite, as `cnperf
// suites --show NAME` prints it.
func File(name string) ([]byte, error) {
	if _, err := Get(name); err != nil {
		return nil, err
	}
	b, err := files.ReadFile("scenarios/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("suite %q is not one of the built-in files; `cnperf suites` lists them", name)
	}
	return b, nil
}

// DefaultNetworks are compared when --placement is given without --networks.
var DefaultNetworks = []string{"baseline", "host", "bridge", "nat", "vxlan", "host-gw"}

// ServiceWorkloads are the service study's: short connections (tcp_crr,
// http_qps without keep-alive), long ones (tcp_rr, http_qps with
// keep-alive).
func ServiceWorkloads() []string {
	out := []string{"tcp_crr", "tcp_rr"}
	if _, err := workload.Get("http_qps"); err == nil {
		out = append(out, "http_qps")
	}
	return out
}

// DefaultServiceNetwork carries service runs when no network is named: a
// routed pod network without encapsulation, so the load balancer's cost
// is not hidden behind an overlay's.
const DefaultServiceNetwork = "host-gw"
