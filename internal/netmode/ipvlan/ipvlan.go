// Package ipvlan is the CNI ipvlan plugin: each pod's eth0 is an ipvlan
// child of its host's underlay NIC, sharing the NIC's MAC, so the NIC hands
// packets straight to the pod by destination IP with no bridge or veth. It
// registers two modes, so both can be rows of one comparison:
//
//   - ipvlan: children in L2 mode, the plugin's default. Pods take addresses from their host's
//     block with the cluster pod network's prefix, all on-link on the
//     underlay segment (as macvlan does); ARP for a pod is answered with
//     the NIC's MAC.
//   - ipvlan-l3: children in L3 mode. The pod has a /32 and a default route
//     out of eth0; the host's namespace routes what the pod sends, and every
//     host routes each other host's block to that host over the underlay
//     (host-gw style), since L3 children answer no ARP.
//
// Both need CONFIG_IPVLAN; on a kernel without it the modes say so and
// comparisons skip them.
package ipvlan

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

func init() {
	netmode.Register(func() netmode.Mode { return Mode{} })
	netmode.Register(func() netmode.Mode { return Mode{L3: true} })
}

// Mode is ipvlan in L2 mode, or L3 with L3 set.
type Mode struct{ L3 bool }

func (m Mode) kind() string {
	if m.L3 {
		return "l3"
	}
	return "l2"
}

// Name implements netmode.Mode.
func (m Mode) Name() string {
	if m.L3 {
		return "ipvlan-l3"
	}
	return "ipvlan"
}

// Summary implements netmode.Mode.
func (m Mode) Summary() string {
	if m.L3 {
		return "IPvlan L3: pod eth0 is an ipvlan L3 child of the host NIC (no bridge, no veth), remote pod blocks routed via their hosts"
	}
	return "IPvlan L2: pod eth0 is an ipvlan L2 child of the host NIC sharing its MAC (no bridge, no veth), pods on the underlay L2"
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
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_IPVLAN", What: "IPvlan devices"}},
		Commands: []string{"ip"},
	}
}

// Setup implements netmode.Mode: L3 mode routes each remote block to its
// host (ip -n H route add R_BLOCK via R_IP dev eth0); L2 needs nothing.
func (m Mode) Setup(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			if !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("%s needs the hosts on one L2 segment: %s (%s) and %s (%s) are not; use vxlan or cloud-routed", m.Name(), h.Name, h.Underlay, r.Name, r.Underlay)
			}
			if m.L3 {
				if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: r.PodCIDR, Via: r.IP, Dev: h.Dev}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// AddPod implements netmode.Mode. Equivalent to:
//
//	ip netns add POD
//	ip -n H link add link eth0 name eth0 netns POD mtu MTU type ipvlan mode l2|l3
//	ip -n POD addr add IP/16 dev eth0             (l2; l3: IP/32)
//	ip -n POD link set eth0 up
//	ip -n POD route add default dev eth0           (l3 only)
func (m Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	if err := l.Apply(ctx, h.NetNS, iproute.Sublink{Kind: "ipvlan", Parent: h.Dev, Name: "eth0", NetNS: pod.NetNS,
		MTU: l.Cfg.MTU, Mode: m.kind()}); err != nil {
		return nil, fmt.Errorf("creating ipvlan for pod %s (needs CONFIG_IPVLAN): %w", name, err)
	}
	bits := l.Cfg.PodNet.Bits()
	if m.L3 {
		bits = 32
	}
	steps := []iproute.Op{
		iproute.Addr{Prefix: netip.PrefixFrom(ip, bits), Dev: "eth0"},
		iproute.Up("eth0"),
	}
	if m.L3 {
		steps = append(steps, iproute.Route{Dev: "eth0"})
	}
	if err := l.Apply(ctx, pod.NetNS, steps...); err != nil {
		return nil, err
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	return pod, nil
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// Traits implements netmode.TraitDeclarer.
func (m Mode) Traits() netmode.Traits {
	return netmode.Traits{L2Adjacency: "remote pod blocks are routed via their host's underlay IP, on-link"}
}
