package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/startup"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	Register(Suite{
		Name:    "density",
		Summary: "each network's latency, connection rate and pod start-up while every host carries 10, 50, 110 and 250 idle pods, against the same network at 10",
		Source:  "issue 26 (the kubelet's default maximum is 110 pods a node, many clusters run 250)",
		Cases: []experiment.Case{
			{Network: "bridge", Placement: netmode.SameHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "calico-bgp", Placement: netmode.CrossHost},
			{Network: "ebpf", Placement: netmode.CrossHost},
		},
		Workloads: []string{"tcp_rr", "tcp_crr", startup.Name},
		Params:    workload.Params{Duration: 3 * time.Second},
		Options:   map[string]string{"density": "10,50,110,250", "startup-pods": "5"},
		Rounds:    3,
		// the two ends, two rounds (a paired interval needs two), 1 s cells
		Shorten: func(s *Suite) {
			s.Options["density"], s.Options["startup-pods"] = "10,250", "3"
			s.Rounds, s.Params.Duration = 2, time.Second
		},
	})
}
