package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	Register(Suite{
		Name:    "startup",
		Summary: "network start-up time (create pod to first ping reply from another host, 10 pods) with its phases",
		Source:  "seeds/001 (INFOCOM 2018), network start-up time",
		Cases: []experiment.Case{
			{Network: "none", Placement: netmode.SamePod}, // a pod with no network
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "docker-overlay", Placement: netmode.CrossHost},
			{Network: "flannel-udp", Placement: netmode.CrossHost},
			{Network: "weave", Placement: netmode.CrossHost},
			{Network: "calico-bgp", Placement: netmode.CrossHost},
		},
		Workloads: []string{"startup"},
		// every network, 3 pods a round instead of 10
		Shorten: func(s *Suite) { s.Options["startup-pods"], s.Rounds = "3", 1 },
	})
	Register(Suite{
		Name:    "overlays",
		Summary: "multi-host overlays against host-gw: Docker overlay, Flannel vxlan and udp, Weave; TCP/UDP throughput and latency, daemon CPU",
		Source:  "seeds/001 (INFOCOM 2018), multi-host modes",
		Cases: []experiment.Case{
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "docker-overlay", Placement: netmode.CrossHost},
			{Network: "flannel-udp", Placement: netmode.CrossHost},
			{Network: "weave", Placement: netmode.CrossHost},
		},
		Workloads: []string{"tcp_rr", "udp_rr", "tcp_stream", "udp_stream"},
		Params:    workload.Params{Duration: 5 * time.Second},
		// every overlay, TCP only, 1 s cells
		Shorten: func(s *Suite) {
			s.Workloads, s.Params.Duration, s.Rounds = []string{"tcp_rr", "tcp_stream"}, time.Second, 1
		},
	})
}
