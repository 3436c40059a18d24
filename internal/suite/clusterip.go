package suite

import (
	"time"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/workload"
)

// ClusterIP reproduces seed 003 (Tencent TKE with Cilium): requests/s
// through a ClusterIP service for each load balancer, with short
// connections (tcp_crr, http_qps without keep-alive) and long ones (tcp_rr,
// http_qps with keep-alive), against the backend's pod IP as the
// reference, with 1 and 10,000 services programmed to show the cost of the
// service count. Pods on Flannel host-gw, so no overlay hides the
// difference; three backends on the two hosts that do not run the client.
func ClusterIP() Suite {
	return Suite{
		Name:      "clusterip",
		Summary:   "ClusterIP load balancing: none, iptables, nftables, ipvs, ebpf-socket, ebpf-tc; short and long connections; 1 and 10,000 services",
		Source:    "seeds/003 (Tencent TKE + Cilium), service load balancing QPS table",
		Cases:     []experiment.Case{{Network: "host-gw", Placement: netmode.CrossHost}},
		Workloads: []string{"tcp_crr", "tcp_rr", "http_qps"},
		Params:    workload.Params{Duration: 3 * time.Second},
		LBs:       []string{"none", "iptables", "nftables", "ipvs", "ebpf-socket", "ebpf-tc"},
		Services:  []int{1, 10000},
		// every load balancer, 1 and 1,000 services, short and long
		// connections (tcp_crr, tcp_rr) in 1 s cells
		Shorten: func(s *Suite) {
			s.Workloads, s.Services, s.Params.Duration = []string{"tcp_crr", "tcp_rr"}, []int{1, 1000}, time.Second
		},
	}
}

func init() { Register(ClusterIP()) }
