package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

// The experiments' suites: seed 001's message-size sweep, noisy
// neighbours and all-to-all scalability.
func init() {
	Register(Suite{
		Name:    "sizes",
		Summary: "TCP and UDP throughput (and CPU per byte) at 64 B to 64 KiB messages: bridge (same host), host, vxlan, host-gw (cross host)",
		Source:  "seeds/001 (INFOCOM 2018), Figures 4-5: throughput against message size",
		Cases: []experiment.Case{
			{Network: "baseline", Placement: netmode.SameHost},
			{Network: "bridge", Placement: netmode.SameHost},
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "host", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
		},
		Workloads: []string{"tcp_stream", "udp_stream"},
		Options:   map[string]string{"message-size": "64,256,1024,4096,16384,65507"},
		Params:    workload.Params{Duration: 2 * time.Second},
		Rounds:    2,
		// the cross-host rows, three sizes, 1 s cells
		Shorten: func(s *Suite) {
			s.Cases = crossHost(s.Cases)
			s.Options["message-size"] = "64,1024,65507"
			s.Params.Duration, s.Rounds = time.Second, 1
		},
	})
	Register(Suite{
		Name:    "interference",
		Summary: "TCP throughput and latency without and with 5 busy neighbour pods (interleaved): host, bridge (same host), vxlan, host-gw, flannel-udp, weave (cross host)",
		Source:  "seeds/001 (INFOCOM 2018), Figure 8: user-space overlays suffer most under CPU contention",
		Cases: []experiment.Case{
			{Network: "baseline", Placement: netmode.SameHost},
			{Network: "bridge", Placement: netmode.SameHost},
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "host", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
			{Network: "flannel-udp", Placement: netmode.CrossHost},
			{Network: "weave", Placement: netmode.CrossHost},
		},
		Workloads: []string{"tcp_stream", "tcp_rr"},
		Options:   map[string]string{"neighbours": "busy:5"},
		Params:    workload.Params{Duration: 2 * time.Second},
		Rounds:    3,
		// host-gw against the user-space overlays, TCP stream, 2 rounds
		Shorten: func(s *Suite) {
			s.Cases = []experiment.Case{
				{Network: "baseline", Placement: netmode.CrossHost},
				{Network: "host-gw", Placement: netmode.CrossHost},
				{Network: "flannel-udp", Placement: netmode.CrossHost},
				{Network: "weave", Placement: netmode.CrossHost},
			}
			s.Workloads, s.Params.Duration, s.Rounds = []string{"tcp_stream"}, time.Second, 2
		},
	})
	Register(Suite{
		Name:    "scalability",
		Summary: "all-to-all exchange of 1024 B messages among 2-32 pods in rounds: time per round, aggregate throughput; one host, two hosts 1:N-1 and balanced",
		Source:  "seeds/001 (INFOCOM 2018), scalability: all-to-all among many containers depends on placement",
		Cases: []experiment.Case{
			{Network: "baseline", Placement: netmode.SameHost},
			{Network: "bridge", Placement: netmode.SameHost},
			{Network: "baseline", Placement: netmode.CrossHost},
			{Network: "vxlan", Placement: netmode.CrossHost},
			{Network: "host-gw", Placement: netmode.CrossHost},
		},
		Workloads: []string{"alltoall"},
		Options:   map[string]string{"pods": "2,4,8,16,32", "spread": "1:N-1,balanced"},
		Params:    workload.Params{Duration: 2 * time.Second, MessageSize: 1024},
		Rounds:    2,
		// 2, 4 and 8 pods, one round of 1 s cells
		Shorten: func(s *Suite) {
			s.Options["pods"] = "2,4,8"
			s.Params.Duration, s.Rounds = time.Second, 1
		},
	})
}

// crossHost keeps the cross-host cases.
func crossHost(cs []experiment.Case) []experiment.Case {
	var out []experiment.Case
	for _, c := range cs {
		if c.Placement == netmode.CrossHost {
			out = append(out, c)
		}
	}
	return out
}
