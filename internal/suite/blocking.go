package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

// Blocking reproduces seed 002 (Kubernetes vs Mesos under production
// load): one nginx balancer splits the same HTTP traffic over a backend on
// each network at once; per network its blocking time to the backend and
// the difference to the baseline's. The rows are the study's machines: a
// plain VM (baseline, the balancer reaching the machine's own process),
// Mesos host mode on one machine; Mesos bridge mode, which the study
// describes as Docker's bridge reached through the host's NAT ("本机NAT转发":
// Docker -p, cnperf's nat, a cross-host network: the balancer's request
// reaches the other host's address and port and is DNAT'ed to the
// container), and Kubernetes flannel vxlan and host-gw across two (against
// the baseline across two). seeddata's tables map Mesos bridge to nat.
func Blocking() Suite {
	return Suite{
		Name:    "blocking",
		Summary: "one nginx balancer, a backend on every network at once: blocking time (upstream connect/header) per network and its difference to the baseline; host (one host), nat, vxlan, host-gw (two hosts)",
		Source:  "seeds/002 (Kubernetes vs Mesos under production load), the blocking-time table",
		Cases: []experiment.Case{
			{Network: "baseline", Placement: netmode.SameHost},
			{Network: "host", Placement: netmode.SameHost},
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "nat", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
		},
		Workloads: []string{"blocking"},
		Params:    workload.Params{Duration: 10 * time.Second},
		Rounds:    5,
		// every row, 2 rounds of 3 s
		Shorten: func(s *Suite) { s.Params.Duration, s.Rounds = 3*time.Second, 2 },
	}
}

func init() { Register(Blocking()) }
