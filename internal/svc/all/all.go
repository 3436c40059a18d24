// Package all registers every ClusterIP load balancer.
package all

import (
	_ "github.com/cnperf/cnperf/internal/svc/ebpfsock" // ebpf-socket
	_ "github.com/cnperf/cnperf/internal/svc/ebpftc"   // ebpf-tc
	_ "github.com/cnperf/cnperf/internal/svc/iptables" // iptables
	_ "github.com/cnperf/cnperf/internal/svc/ipvs"     // ipvs
	_ "github.com/cnperf/cnperf/internal/svc/nftables" // nftables
)
