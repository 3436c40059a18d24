// Package suite holds named presets: a study's comparison as one command
// (`cnperf run --suite NAME`). A preset is data: the cases, workloads and
// parameters a run would otherwise take from flags; flags the user gives
// still override it.
package suite

import (
	"maps"
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
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
	// Options set the experiments' own options by name, as their flags
	// would ("message-size": "64,1024", "neighbours": "busy:5", "tuning":
	// "none,study"); the flags override them. An option no experiment of
	// the run takes (the user chose other workloads) is dropped.
	Options map[string]string
	// Rounds is how many interleaved rounds the suite runs by default
	// (--repeat overrides it); 0 means 1.
	Rounds int
	// Shorten makes the suite's --quick version from a copy of it: fewer
	// rounds, sizes, pods, networks and shorter cells, the same
	// experiment, under two minutes on a 2-CPU machine. Nil: one round of
	// 1 s cells.
	Shorten func(s *Suite)
}

// Quick is the suite's --quick version: flags the user gives still
// override it.
func (s Suite) Quick() Suite {
	q := s
	q.Cases = append([]experiment.Case(nil), s.Cases...)
	q.Params.Extra = maps.Clone(s.Params.Extra)
	q.Options = maps.Clone(s.Options)
	if q.Options == nil {
		q.Options = map[string]string{}
	}
	q.Summary = "(quick) " + s.Summary
	if s.Shorten == nil {
		q.Params.Duration, q.Rounds = time.Second, 1
		return q
	}
	s.Shorten(&q)
	return q
}

var reg = registry.New[Suite]("suite", "`cnperf suites` lists them")

// Register adds a preset; duplicates panic (a programming error).
func Register(s Suite) { reg.Register(s.Name, s) }

// Get finds a preset or says which exist.
func Get(name string) (Suite, error) { return reg.Get(name) }

// Names lists the presets, sorted.
func Names() []string { return reg.Names() }

// Default is the main job: the paper's single- and multi-host rows with a
// latency and a throughput workload, about two minutes here.
var Default = Suite{
	Name:    "default",
	Summary: "baseline, host, bridge (same host), nat, vxlan, host-gw (cross host) with tcp_rr and tcp_stream",
	Source:  "seeds/001 (INFOCOM 2018), Figures 3-6",
	Cases: []experiment.Case{
		{Network: "baseline", Placement: netmode.SameHost},
		{Network: "bridge", Placement: netmode.SameHost},
		{Network: "baseline", Placement: netmode.CrossHost},
		{Network: "host", Placement: netmode.CrossHost},
		{Network: "nat", Placement: netmode.CrossHost},
		{Network: "vxlan", Placement: netmode.CrossHost},
		{Network: "host-gw", Placement: netmode.CrossHost},
	},
	Workloads: []string{"tcp_rr", "tcp_stream"},
	// three interleaved rounds of 3 s cells: enough for an interval and a
	// verdict on every ratio, about three minutes on a 2-CPU machine
	Params: workload.Params{Duration: 3 * time.Second},
	Rounds: 3,
	// every row and workload, two rounds of 1 s cells: still an interval
	Shorten: func(s *Suite) { s.Params.Duration, s.Rounds = time.Second, 2 },
}

func init() {
	Register(Default)
	Register(Suite{
		Name:    "single-host",
		Summary: "none/container (same pod), baseline, host, bridge (same host): TCP and UDP throughput and latency",
		Source:  "seeds/001 (INFOCOM 2018), single-host modes",
		Cases: []experiment.Case{
			{Network: "container", Placement: netmode.SamePod},
			{Network: "none", Placement: netmode.SamePod},
			{Network: "baseline", Placement: netmode.SameHost},
			{Network: "host", Placement: netmode.SameHost},
			{Network: "bridge", Placement: netmode.SameHost},
		},
		Workloads: []string{"tcp_rr", "udp_rr", "tcp_stream", "udp_stream"},
		Params:    workload.Params{Duration: 5 * time.Second},
		Shorten:   func(s *Suite) { s.Params.Duration, s.Rounds = time.Second, 1 },
	})
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
