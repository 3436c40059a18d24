// Package all registers every network mode; import it for its side effects.
package all

import (
	_ "github.com/cnperf/cnperf/internal/netmode/baseline"      // baseline
	_ "github.com/cnperf/cnperf/internal/netmode/bridge"        // bridge
	_ "github.com/cnperf/cnperf/internal/netmode/calicobgp"     // calico-bgp
	_ "github.com/cnperf/cnperf/internal/netmode/calicoipip"    // calico-ipip
	_ "github.com/cnperf/cnperf/internal/netmode/cloudrouted"   // cloud-routed
	_ "github.com/cnperf/cnperf/internal/netmode/container"     // container
	_ "github.com/cnperf/cnperf/internal/netmode/dockeroverlay" // docker-overlay
	_ "github.com/cnperf/cnperf/internal/netmode/ebpf"          // ebpf
	_ "github.com/cnperf/cnperf/internal/netmode/flanneludp"    // flannel-udp
	_ "github.com/cnperf/cnperf/internal/netmode/gre"           // gre
	_ "github.com/cnperf/cnperf/internal/netmode/host"          // host
	_ "github.com/cnperf/cnperf/internal/netmode/hostgw"        // host-gw
	_ "github.com/cnperf/cnperf/internal/netmode/ipvlan"        // ipvlan, ipvlan-l3
	_ "github.com/cnperf/cnperf/internal/netmode/macvlan"       // macvlan
	_ "github.com/cnperf/cnperf/internal/netmode/nat"           // nat
	_ "github.com/cnperf/cnperf/internal/netmode/none"          // none
	_ "github.com/cnperf/cnperf/internal/netmode/vxlan"         // vxlan
	_ "github.com/cnperf/cnperf/internal/netmode/weave"         // weave
)
