// Package podnet holds the building blocks most CNI-style networks share: a
// per-host bridge holding the pod subnet's gateway, and a veth per pod, as the
// CNI bridge plugin and Docker's bridge driver do.
package podnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
)

// EnsureBridge creates bridge name on host h with the pod subnet's gateway
// address. Equivalent to:
//
//	ip -n H link add NAME mtu MTU type bridge
//	ip -n H addr add GW/BITS dev NAME
//	ip -n H link set NAME up
//
// With lab.Config.StaticNeighbours the bridge gets a fixed address,
// BridgeMAC, for the pods' permanent entries to point at.
func EnsureBridge(ctx context.Context, l *lab.Lab, h *lab.Host, name string, mtu int) error {
	br := iproute.Bridge{Name: name, MTU: mtu}
	if l.Cfg.StaticNeighbours {
		br.Address = BridgeMAC(h)
	}
	if err := l.Apply(ctx, h.NetNS, br); err != nil {
		return fmt.Errorf("creating bridge %s on %s: %w", name, h.Name, err)
	}
	return l.Apply(ctx, h.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(h.PodGateway(), h.PodCIDR.Bits()), Dev: name},
		iproute.Up(name),
	)
}

// BridgeMAC is host h's pod bridge address when it is fixed: locally
// administered, from the host's index.
func BridgeMAC(h *lab.Host) net.HardwareAddr {
	return net.HardwareAddr{0x0e, 0x5a, 0, 0, byte(h.Index >> 8), byte(h.Index)}
}

// PodMAC is a pod's address when it is fixed: 0a:58 and the pod's IPv4
// address, as the CNI plugins derive it.
func PodMAC(ip netip.Addr) net.HardwareAddr {
	b := ip.As4()
	return net.HardwareAddr{0x0a, 0x58, b[0], b[1], b[2], b[3]}
}

// HostVeth is the host-side name of a pod's veth.
func HostVeth(podName string) string { return "veth" + podName }

// AttachPod creates a pod namespace on h, joins it to bridge with a veth
// (eth0 inside), gives it the next address of the host's pod subnet and a
// default route via the bridge. Equivalent to:
//
//	ip netns add POD
//	ip -n H link add vethNAME mtu MTU type veth peer name eth0 mtu MTU netns POD
//	ip -n H link set vethNAME master BRIDGE up
//	ip -n POD addr add IP/BITS dev eth0
//	ip -n POD link set eth0 up
//	ip -n POD route add default via GW
//
// It then waits until the bridge port is up (as the CNI bridge plugin
// does). With lab.Config.StaticNeighbours (and a bridge) the pod's address is
// fixed (PodMAC), and two permanent entries replace what ARP would learn:
//
//	ip -n H neigh add IP lladdr PODMAC dev BRIDGE nud permanent
//	ip -n POD neigh add GW lladdr BRIDGEMAC dev eth0 nud permanent
func AttachPod(ctx context.Context, l *lab.Lab, h *lab.Host, name, bridge string, mtu int) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	hv := HostVeth(name)
	veth := iproute.Veth{Name: hv, MTU: mtu, Peer: "eth0", PeerNS: pod.NetNS}
	static := l.Cfg.StaticNeighbours && bridge != ""
	if static {
		veth.PeerAddress = PodMAC(ip)
	}
	if err := l.Apply(ctx, h.NetNS, veth); err != nil {
		return nil, fmt.Errorf("creating veth for pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, h.NetNS, iproute.LinkSet{Name: hv, Master: bridge, Up: true}); err != nil {
		return nil, err
	}
	if static {
		if err := l.Apply(ctx, h.NetNS, iproute.Neigh{IP: ip, MAC: PodMAC(ip), Dev: bridge}); err != nil {
			return nil, err
		}
	}
	ops := []iproute.Op{
		iproute.Addr{Prefix: netip.PrefixFrom(ip, h.PodCIDR.Bits()), Dev: "eth0"},
		iproute.Up("eth0"),
	}
	if static {
		ops = append(ops, iproute.Neigh{IP: h.PodGateway(), MAC: BridgeMAC(h), Dev: "eth0"})
	}
	if err := l.Apply(ctx, pod.NetNS, append(ops, iproute.Route{Via: h.PodGateway()})...); err != nil {
		return nil, err
	}
	if bridge != "" {
		// as the CNI bridge plugin and Docker do: the pod is ready once
		// its port forwards
		if err := l.WaitOperUp(ctx, h.NetNS, hv, 2*time.Second); err != nil {
			return nil, fmt.Errorf("pod %s: bridge port: %w", name, err)
		}
	}
	return pod, nil
}

// Direct returns the address to dial: loopback when both share a namespace,
// else the server pod's own address.
func Direct(from, to *lab.Pod, port int) (netip.AddrPort, error) {
	if from.NetNS == to.NetNS {
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), nil
	}
	if !to.IP.IsValid() {
		return netip.AddrPort{}, fmt.Errorf("pod %s has no address peers can reach", to.Name)
	}
	return netip.AddrPortFrom(to.IP, uint16(port)), nil
}
