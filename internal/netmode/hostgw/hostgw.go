// Package hostgw is Flannel's host-gw backend: pods on a per-host cni0
// bridge, and on every host a route to each other host's pod subnet via that
// host's underlay address. No encapsulation, but it needs the hosts to be L2
// neighbours.
package hostgw

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/cni"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// BridgeName is Flannel's CNI bridge.
const BridgeName = "cni0"

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is Flannel host-gw.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "host-gw" }

// Replicates implements result.Replicator: Flannel's host-gw backend (a route per remote subnet via its host), as a cluster
// running it records it.
func (Mode) Replicates() string { return "flannel host-gw" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Flannel host-gw: a route per remote pod subnet via its host's underlay IP (needs L2 adjacency)"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_BRIDGE", What: "Linux bridge"}},
		Commands: []string{"ip"},
	}
}

// Setup implements netmode.Mode.
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, l.Cfg.MTU); err != nil {
			return err
		}
	}
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			if !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("host-gw needs L2 adjacency: %s (%s) and %s (%s) are on different subnets; use vxlan or cloud-routed", h.Name, h.Underlay, r.Name, r.Underlay)
			}
			// ip -n H route add REMOTE_POD_CIDR via REMOTE_IP dev eth0
			if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: r.PodCIDR, Via: r.IP, Dev: h.Dev}); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddPod implements netmode.Mode.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, BridgeName, l.Cfg.MTU)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// Traits implements netmode.TraitDeclarer.
func (Mode) Traits() netmode.Traits {
	return netmode.Traits{L2Adjacency: "each host routes a remote pod subnet via that host's underlay IP, on-link"}
}

// CNIReference implements netmode.CNIReferencer: what Flannel's CNI
// plugin delegates to, the CNI bridge plugin on cni0 (no masquerade:
// flanneld does that).
func (Mode) CNIReference(l *lab.Lab, _ *lab.Host) cni.Reference {
	return cni.Reference{Type: "bridge", Routes: []string{"0.0.0.0/0"},
		Fields: map[string]any{"bridge": BridgeName, "isGateway": true, "mtu": l.Cfg.MTU}}
}
