// Package calicoipip is Calico's IPIP mode: pods wired exactly as in
// calico-bgp (cali veths, /32 routes, the 169.254.1.1 proxy-ARP gateway),
// but traffic to another host's pod block is encapsulated in IPv4 (protocol
// 4) through the tunl0 device, so the hosts need only IP reachability, not
// L2 adjacency. Routes are programmed per remote block the way Felix does
// with ProgramClusterRoutes (or BIRD with Calico's tunnel filter):
// `BLOCK via REMOTE_HOST dev tunl0 onlink`. tunl0 carries the first address
// of the host's block and MTU = underlay - 20.
//
// It needs CONFIG_NET_IPIP; on a kernel without it the mode says so and
// comparisons skip it.
package calicoipip

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/calicobgp"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// Device and Overhead are Calico's tunnel device and its outer IPv4 header.
const (
	Device   = "tunl0"
	Overhead = 20
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is Calico IPIP.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "calico-ipip" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Calico IPIP: cali veths and proxy-ARP gateway as calico-bgp, remote pod blocks via tunl0 (IP-in-IP), pod MTU -20"
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
			{Config: "CONFIG_NET_IPIP", What: "IP-in-IP tunnels"},
			{Config: "CONFIG_VETH", What: "veth pairs"},
		},
		Commands: []string{"ip"},
	}
}

// Setup implements netmode.Mode. Per host, equivalent to:
//
//	ip -n H route add 169.254.1.1/32 dev eth0 scope link
//	ip -n H link show tunl0 || ip -n H link add tunl0 type ipip
//	ip -n H link set tunl0 mtu MTU-20 up
//	ip -n H addr add BLOCK.0/32 dev tunl0
//	ip -n H route add blackhole BLOCK
//	ip -n H route add REMOTE_BLOCK via REMOTE_IP dev tunl0 onlink   (each remote host)
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	mtu := l.Cfg.MTU - Overhead
	for _, h := range l.Hosts {
		if err := calicobgp.PrepareHost(ctx, l, h); err != nil {
			return err
		}
		// loading the ipip module gives every namespace a fallback tunl0;
		// create one only where the kernel did not
		if _, err := l.Run(ctx, "ip", "-n", h.NetNS, "link", "show", Device); err != nil {
			if err := l.Apply(ctx, h.NetNS, iproute.Tunnel{Kind: "ipip", Name: Device}); err != nil {
				return fmt.Errorf("creating %s on %s (needs CONFIG_NET_IPIP): %w", Device, h.Name, err)
			}
		}
		steps := []iproute.Op{
			iproute.LinkSet{Name: Device, MTU: mtu, Up: true},
			iproute.Addr{Prefix: netip.PrefixFrom(h.PodCIDR.Addr(), 32), Dev: Device},
			iproute.Route{Blackhole: true, Dst: h.PodCIDR},
		}
		for _, r := range l.Hosts {
			if r != h {
				steps = append(steps, iproute.Route{Dst: r.PodCIDR, Via: r.IP, Dev: Device, OnLink: true})
			}
		}
		if err := l.Apply(ctx, h.NetNS, steps...); err != nil {
			return fmt.Errorf("calico-ipip on %s: %w", h.Name, err)
		}
	}
	return nil
}

// AddPod implements netmode.Mode: Calico's wiring with the tunnel's MTU.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return calicobgp.AttachPod(ctx, l, h, name, l.Cfg.MTU-Overhead)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
