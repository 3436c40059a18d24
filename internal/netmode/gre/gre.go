// Package gre is a GRE overlay as early Kubernetes and OpenShift SDN
// setups built it: pods on a per-host cni0 bridge, and from every host a
// point-to-point GRE tunnel to every other host (gre-<peer>, local and
// remote underlay addresses, TTL 64) carrying that host's pod block. The
// pod MTU drops by the 24 bytes of outer IPv4 + GRE header.
//
// It needs CONFIG_NET_IPGRE; on a kernel without it the mode says so and
// comparisons skip it.
package gre

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

// BridgeName and Overhead: the pods' bridge and the encapsulation's bytes.
const (
	BridgeName = "cni0"
	Overhead   = 24 // outer IPv4 20 + GRE 4
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is the GRE overlay.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "gre" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "GRE overlay: pods on cni0, a point-to-point GRE tunnel per remote host carrying its pod block, pod MTU -24"
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
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_NET_IPGRE", What: "GRE tunnels"},
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
		},
		Commands: []string{"ip"},
	}
}

// TunnelName is the device on one host leading to peer r.
func TunnelName(r *lab.Host) string { return "gre-" + r.Name }

// Setup implements netmode.Mode. Per host, equivalent to:
//
//	ip -n H link add cni0 mtu MTU-24 type bridge; addr GW/24; up
//	ip -n H link add gre-R type gre local H_IP remote R_IP ttl 64   (each remote R)
//	ip -n H link set gre-R mtu MTU-24 up
//	ip -n H route add R_BLOCK dev gre-R
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	mtu := l.Cfg.MTU - Overhead
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, mtu); err != nil {
			return err
		}
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			t := TunnelName(r)
			if err := l.Apply(ctx, h.NetNS,
				iproute.Tunnel{Kind: "gre", Name: t, Local: h.IP, Remote: r.IP, TTL: 64},
				iproute.LinkSet{Name: t, MTU: mtu, Up: true},
				iproute.Route{Dst: r.PodCIDR, Dev: t},
			); err != nil {
				return fmt.Errorf("gre on %s (needs CONFIG_NET_IPGRE): %w", h.Name, err)
			}
		}
	}
	return nil
}

// AddPod implements netmode.Mode.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, BridgeName, l.Cfg.MTU-Overhead)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
