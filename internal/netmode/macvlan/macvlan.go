// Package macvlan puts pods directly on the underlay, as the CNI macvlan
// plugin does in bridge mode: each pod's eth0 is a macvlan child of its
// host's underlay NIC with a MAC of its own, so frames leave the pod straight
// onto the wire with no bridge, veth or routing hop on the host. Siblings on
// one host talk through the macvlan's internal bridge; pods on other hosts
// are plain L2 neighbours across the underlay switch.
//
// Addressing: a pod takes the next address of its host's pod subnet
// (10.244.N.0/24) but with the whole cluster pod network's prefix (/16) and
// no gateway, so every pod of every host is on-link: one flat L2 segment
// shared with the hosts, with per-host IPAM ranges so hosts never hand out
// the same address. As with every macvlan setup, a pod cannot reach its own
// host's underlay address (the parent does not see its children's frames).
package macvlan

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

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is macvlan in bridge mode.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "macvlan" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "macvlan bridge mode: pod eth0 is a macvlan child of the host NIC, pods on the underlay L2 (no bridge, no veth)"
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
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_MACVLAN", What: "macvlan devices"}},
		Commands: []string{"ip"},
	}
}

// Setup implements netmode.Mode. Macvlan needs the hosts to share one L2
// segment; nothing else is configured on the hosts.
func (Mode) Setup(_ context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r != h && !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("macvlan needs the hosts on one L2 segment: %s (%s) and %s (%s) are not; use vxlan or cloud-routed", h.Name, h.Underlay, r.Name, r.Underlay)
			}
		}
	}
	return nil
}

// AddPod implements netmode.Mode. Equivalent to:
//
//	ip netns add POD
//	ip -n H link add link eth0 name eth0 netns POD mtu MTU type macvlan mode bridge
//	ip -n POD addr add IP/PODNETBITS dev eth0
//	ip -n POD link set eth0 up
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	if err := l.Apply(ctx, h.NetNS, iproute.Sublink{Kind: "macvlan", Parent: h.Dev, Name: "eth0", NetNS: pod.NetNS,
		MTU: l.Cfg.MTU, Mode: "bridge"}); err != nil {
		return nil, fmt.Errorf("creating macvlan for pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, pod.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(ip, l.Cfg.PodNet.Bits()), Dev: "eth0"},
		iproute.Up("eth0"),
	); err != nil {
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
func (Mode) Traits() netmode.Traits {
	return netmode.Traits{L2Adjacency: "pods sit on the underlay L2 segment itself"}
}

// CNIReference implements netmode.CNIReferencer: the CNI macvlan plugin
// in bridge mode on the host's underlay device, an address of the whole
// pod network and no route (as AddPod).
func (Mode) CNIReference(l *lab.Lab, h *lab.Host) cni.Reference {
	return cni.Reference{Type: "macvlan", Subnet: l.Cfg.PodNet, NoGateway: true,
		Fields: map[string]any{"master": h.Dev, "mode": "bridge", "mtu": l.Cfg.MTU}}
}
