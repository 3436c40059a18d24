// Package nat is Docker's port publishing (docker run -p): containers sit on
// a per-host docker0 bridge with private addresses; a peer on another host
// dials the server host's own address and a published port, which the host
// DNATs to the container; traffic leaving a container is masqueraded.
package nat

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/bridge"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// PortBase is the first published host port; container port P is published
// as PortBase+P%10000 unless taken.
const PortBase = 30000

func init() { netmode.Register(func() netmode.Mode { return &Mode{} }) }

// Mode is Docker NAT networking.
type Mode struct {
	mu        sync.Mutex
	published map[string]map[int]bool // host ns -> host port -> used
}

// Name implements netmode.Mode.
func (*Mode) Name() string { return "nat" }

// Summary implements netmode.Mode.
func (*Mode) Summary() string {
	return "Docker -p: pods on docker0, reached via the host IP and a DNAT'ed port, masqueraded out"
}

// Placements implements netmode.Mode.
func (*Mode) Placements() []ground.Placement { return []ground.Placement{ground.CrossHost} }

// Refuse implements netmode.Refuser.
func (*Mode) Refuse(p ground.Placement) string {
	if p == ground.SameHost {
		return "nat publishes ports to other hosts; pods on one host talk over the bridge: use --networks bridge for same-host"
	}
	return ""
}

// Options implements netmode.Mode: none of its own.
func (*Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (*Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
			{Config: "CONFIG_NF_NAT", What: "netfilter NAT"},
			{Config: "CONFIG_NETFILTER_XT_MATCH_ADDRTYPE", What: "iptables addrtype match"},
		},
		Commands: []string{"ip", "iptables"},
	}
}

func ipt(ctx context.Context, l *lab.Lab, h *lab.Host, args ...string) error {
	_, err := l.In(ctx, h.NetNS, append([]string{"iptables", "-w"}, args...)...)
	return err
}

// Setup implements netmode.Mode: docker0, the DOCKER nat chain and the
// masquerade rule, as dockerd programs them.
func (m *Mode) Setup(ctx context.Context, l *lab.Lab) error {
	m.mu.Lock()
	m.published = map[string]map[int]bool{}
	m.mu.Unlock()
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, bridge.BridgeName, l.Cfg.MTU); err != nil {
			return err
		}
		rules := [][]string{
			{"-t", "nat", "-N", "DOCKER"},
			{"-t", "nat", "-A", "PREROUTING", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "DOCKER"},
			{"-t", "nat", "-A", "OUTPUT", "!", "-d", "127.0.0.0/8", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "DOCKER"},
			{"-t", "nat", "-A", "POSTROUTING", "-s", h.PodCIDR.String(), "!", "-o", bridge.BridgeName, "-j", "MASQUERADE"},
			{"-t", "nat", "-A", "DOCKER", "-i", bridge.BridgeName, "-j", "RETURN"},
		}
		for _, r := range rules {
			if err := ipt(ctx, l, h, r...); err != nil {
				return fmt.Errorf("nat on %s: %w", h.Name, err)
			}
		}
	}
	return nil
}

// AddPod implements netmode.Mode.
func (*Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, bridge.BridgeName, l.Cfg.MTU)
}

// Expose implements netmode.Mode: publish the port on the server's host.
func (m *Mode) Expose(ctx context.Context, l *lab.Lab, from, to *lab.Pod, proto string, port int) (netip.AddrPort, error) {
	if from.Host == to.Host {
		return podnet.Direct(from, to, port)
	}
	hp, err := m.allocate(to.Host.NetNS, port)
	if err != nil {
		return netip.AddrPort{}, err
	}
	dst := netip.AddrPortFrom(to.IP, uint16(port)).String()
	if err := ipt(ctx, l, to.Host, "-t", "nat", "-A", "DOCKER", "!", "-i", bridge.BridgeName, "-p", proto,
		"--dport", fmt.Sprint(hp), "-j", "DNAT", "--to-destination", dst); err != nil {
		return netip.AddrPort{}, fmt.Errorf("publishing %s/%d: %w", proto, port, err)
	}
	return netip.AddrPortFrom(to.Host.IP, uint16(hp)), nil
}

func (m *Mode) allocate(ns string, port int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.published == nil {
		m.published = map[string]map[int]bool{}
	}
	if m.published[ns] == nil {
		m.published[ns] = map[int]bool{}
	}
	for hp := PortBase + port%10000; hp < 65536; hp++ {
		if !m.published[ns][hp] {
			m.published[ns][hp] = true
			return hp, nil
		}
	}
	return 0, fmt.Errorf("nat: no free host port for container port %d", port)
}
