package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	Register(Suite{
		Name:    "density",
		Summary: "each network's latency, connection rate and pod start-up while every host carries 10, 50, 110 and 250 idle pods, against the same network at 10",
		Source:  "issue 26 (the kubelet's default maximum is 110 pods a node, many clusters run 250)",
		Cases: []runner.Case{
			{Network: "bridge", Placement: netmode.SameHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "calico-bgp", Placement: netmode.CrossHost},
			{Network: "ebpf", Placement: netmode.CrossHost},
		},
		Workloads:   []string{"tcp_rr", "tcp_crr", runner.StartupName},
		Params:      workload.Params{Duration: 3 * time.Second},
		Densities:   []int{10, 50, 110, 250},
		Rounds:      3,
		StartupPods: 5,
		// the two ends, two rounds (a paired interval needs two), 1 s cells
		Shorten: func(s *Suite) {
			s.Densities, s.Rounds, s.StartupPods, s.Params.Duration = []int{10, 250}, 2, 3, time.Second
		},
	})
}
