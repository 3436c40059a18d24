// Package vxlan is Flannel's vxlan backend: each host has a flannel.1 VXLAN
// device (VNI 1, UDP 8472, no learning) whose address is its pod subnet's
// network address; for every remote host flanneld installs a route to its
// pod subnet via that address (onlink), a permanent neighbour entry mapping
// it to the remote VTEP's MAC, and an FDB entry mapping that MAC to the
// remote host's underlay IP. Pods sit on cni0 with the MTU lowered by the
// 50 bytes of VXLAN encapsulation.
package vxlan

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

// Flannel's names and numbers.
const (
	Device     = "flannel.1"
	BridgeName = "cni0"
	VNI        = 1
	Port       = 8472
	Overhead   = 50 // outer Ethernet 14 + IP 20 + UDP 8 + VXLAN 8
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is Flannel vxlan.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "vxlan" }

// Replicates implements result.Replicator: Flannel's vxlan backend (flannel.1, its neighbour and FDB entries per remote subnet), as a cluster
// running it records it.
func (Mode) Replicates() string { return "flannel vxlan" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Flannel vxlan: flannel.1 VXLAN device with static FDB/neighbour entries, pod MTU -50"
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
			{Config: "CONFIG_VXLAN", What: "VXLAN devices"},
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
		},
		Commands: []string{"ip", "bridge"},
	}
}

// VTEPMAC is host h's VTEP address: locally administered and derived from
// the host index, so every host can program its peers without asking them.
func VTEPMAC(h *lab.Host) string {
	return fmt.Sprintf("0e:f1:00:00:%02x:%02x", h.Index>>8&0xff, h.Index&0xff)
}

// Setup implements netmode.Mode.
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	podMTU := l.Cfg.MTU - Overhead
	for _, h := range l.Hosts {
		if err := l.Apply(ctx, h.NetNS,
			iproute.VXLAN{Name: Device, VNI: VNI, Local: h.IP, Dev: h.Dev, Port: Port},
			iproute.LinkSet{Name: Device, Address: iproute.MustMAC(VTEPMAC(h)), MTU: podMTU},
			iproute.Addr{Prefix: netip.PrefixFrom(h.PodCIDR.Addr(), 32), Dev: Device},
			iproute.Up(Device),
		); err != nil {
			return fmt.Errorf("vxlan on %s: %w", h.Name, err)
		}
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, l.Cfg.MTU-Overhead); err != nil {
			return err
		}
	}
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			gw, mac := r.PodCIDR.Addr(), iproute.MustMAC(VTEPMAC(r))
			if err := l.Apply(ctx, h.NetNS,
				iproute.Route{Dst: r.PodCIDR, Via: gw, Dev: Device, OnLink: true},
				iproute.Neigh{IP: gw, MAC: mac, Dev: Device},
				iproute.FDB{MAC: mac, Dev: Device, Dst: r.IP, Append: true},
			); err != nil {
				return err
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

// CNIReference implements netmode.CNIReferencer: Flannel's delegate, the
// CNI bridge plugin on cni0, with the VXLAN MTU.
func (Mode) CNIReference(l *lab.Lab, _ *lab.Host) cni.Reference {
	return cni.Reference{Type: "bridge", Routes: []string{"0.0.0.0/0"},
		Fields: map[string]any{"bridge": BridgeName, "isGateway": true, "mtu": l.Cfg.MTU - Overhead}}
}
