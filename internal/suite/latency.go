package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

// SeedLatency reproduces seed 000's constant-rate experiment: nginx serving
// a 350 B and a 4 KB response, HTTP requests at a constant rate across
// hosts, per network the highest rate held and the latency percentiles to
// p99.999 at 20%, 60% and 100% of it; host networking is the reference.
func SeedLatency() Suite {
	s := Suite{
		Name:    "seed-latency",
		Summary: "constant-rate HTTP to nginx (350 B, 4 KB): max-rate search, then p50..p99.999 at 20/60/100% of it; host, host-gw, vxlan, macvlan, ipvlan; untuned and with the study's tuning (--tuning none,study)",
		Source:  "seeds/000 (Kubernetes network solutions comparison), latency tables",
		Cases: []experiment.Case{
			{Network: "host", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
		},
		Workloads: []string{"http_rate"},
		Params: workload.Params{
			Duration: 5 * time.Second,
			Extra: map[string]string{
				"server": "nginx", "response-size": "350,4096", "max-rate-search": "true",
				"connections": "256",
			},
		},
		// the study's host tuning, measured against none in the same run
		Options: map[string]string{"tuning": "none,study"},
		// host and vxlan, 350 B only, untuned and tuned, two fixed rates
		// of 1 s instead of the search (up to 24 steps a cell) and its ladder
		Shorten: func(s *Suite) {
			s.Cases = []experiment.Case{{Network: "host", Placement: netmode.CrossHost}, {Network: "vxlan", Placement: netmode.CrossHost}}
			s.Params.Duration = time.Second
			s.Params.Extra["response-size"] = "350"
			s.Params.Extra["max-rate-search"] = "false"
			s.Params.Extra["rate"] = "2000,10000"
		},
	}
	// macvlan and ipvlan are rows where this cnperf has them (a kernel
	// without the driver turns the row into a recorded skip at run time)
	for _, n := range []string{"macvlan", "ipvlan"} {
		if _, err := netmode.Get(n); err == nil {
			s.Cases = append(s.Cases, experiment.Case{Network: n, Placement: netmode.CrossHost})
		}
	}
	return s
}

func init() {
	// Go initialises internal/netmode/... before internal/suite (import-path
	// order, no dependency between them), so the modes are registered here
	// when the binary links them in.
	Register(SeedLatency())
}
