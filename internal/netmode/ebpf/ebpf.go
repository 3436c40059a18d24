// Package ebpf is a Cilium-like datapath in native-routing mode: pods hang
// off the host on bare veths (lxc<pod>), and tc programs (TCX, in the
// kernel since 6.6) on those veths and on the host's underlay NIC move
// packets themselves: a packet for a pod on the same host is handed straight
// into the peer's namespace with bpf_redirect_peer, one for another host's
// pod leaves through the underlay NIC with bpf_redirect_neigh, and a packet
// arriving for a local pod is redirected into it from the NIC's ingress. No
// bridge, no netfilter, no second pass through the host's stack. A BPF hash
// map holds the host's endpoints (pod IP -> veth ifindex and MACs), as
// Cilium's lxc map does; the host routes every remote pod block to its host
// (Cilium's auto-direct-node-routes), which redirect_neigh's FIB lookup uses.
//
// The C source is datapath.c; datapath_bpfel.{go,o} are generated from it by
// bpf2go and committed, so building cnperf needs no clang
// (scripts/check-bpf.sh regenerates and compares them). Programs are attached
// through BPF links held by cnperf and closed at teardown; nothing is pinned.
package ebpf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

func init() { netmode.Register(func() netmode.Mode { return New() }) }

// Mode is the eBPF datapath. dp is the kernel's (New) or, in tests, a
// recorder; an instance serves one lab at a time.
type Mode struct{ dp datapath }

// New is a mode instance on the kernel's datapath.
func New() Mode { return Mode{dp: &kernelDP{}} }

// datapath is what the mode asks of BPF: programs on a host, an endpoint in
// its map.
type datapath interface {
	setupHost(ctx context.Context, l *lab.Lab, h *lab.Host) error
	addEndpoint(ctx context.Context, l *lab.Lab, h *lab.Host, ep Endpoint) error
}

func (m Mode) datapath() datapath {
	if m.dp != nil {
		return m.dp
	}
	return noDP{}
}

// noDP is the datapath of a Mode not made by New.
type noDP struct{}

var errNoDP = errors.New("no datapath: make the mode with ebpf.New or netmode.Get")

func (noDP) setupHost(context.Context, *lab.Lab, *lab.Host) error { return errNoDP }

func (noDP) addEndpoint(context.Context, *lab.Lab, *lab.Host, Endpoint) error { return errNoDP }

// Name implements netmode.Mode.
func (Mode) Name() string { return "ebpf" }

// Replicates implements result.Replicator: Cilium's datapath in native routing (--routing-mode=native with auto-direct-node-routes), as a cluster
// running it records it.
func (Mode) Replicates() string { return "cilium native-routing" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Cilium-like eBPF datapath: tc programs on pod veths and the NIC redirect packets (bpf_redirect_peer/neigh), no bridge, no iptables"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode.
func (Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "local", Kind: option.Enum, Values: []string{LocalPeer, LocalVeth}, Default: LocalPeer,
			Help: "same-host delivery: peer = bpf_redirect_peer into the pod (Cilium's BPF host routing); veth = bpf_redirect out of the pod's host veth, through the CPU backlog (Cilium's legacy host routing)"},
	}
}

// The values of option local.
const (
	LocalPeer = "peer"
	LocalVeth = "veth"
)

// flagLocalBacklog is CFG_LOCAL_BACKLOG in datapath.c.
const flagLocalBacklog = 1

// configFlags reads the mode options into the config map's flags.
func configFlags(c *lab.Config) (uint32, error) {
	switch v := c.ModeOpt("local", LocalPeer); v {
	case LocalPeer:
		return 0, nil
	case LocalVeth:
		return flagLocalBacklog, nil
	default:
		return 0, fmt.Errorf("ebpf: option local=%q: want %s or %s", v, LocalPeer, LocalVeth)
	}
}

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_BPF_SYSCALL", What: "BPF"},
			{Config: "CONFIG_NET_XGRESS", What: "TCX attachment of tc BPF programs (kernel 6.6+)"},
			{Config: "CONFIG_VETH", What: "veth pairs"},
		},
		Commands: []string{"ip"},
	}
}

// Endpoint is one pod as the datapath's endpoint map holds it.
type Endpoint struct {
	IP       netip.Addr
	HostVeth string // host side of its veth
	MAC      net.HardwareAddr
	HostMAC  net.HardwareAddr
}

// MACs derives a pod's eth0 MAC and its host-side veth's from its address
// (0a:58 is what the CNI plugins use for IP-derived MACs), so the endpoint
// map can be filled without asking the kernel.
func MACs(ip netip.Addr) (pod, host net.HardwareAddr) {
	b := ip.As4()
	return net.HardwareAddr{0x0a, 0x58, b[0], b[1], b[2], b[3]}, net.HardwareAddr{0x0e, 0x58, b[0], b[1], b[2], b[3]}
}

// HostVeth names a pod's host-side veth the Cilium way.
func HostVeth(pod string) string { return "lxc" + pod }

// Setup implements netmode.Mode: routes to the other hosts' pod blocks, and
// the programs on every host's underlay NIC.
func (m Mode) Setup(ctx context.Context, l *lab.Lab) error {
	if _, err := configFlags(&l.Cfg); err != nil {
		return err
	}
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			if !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("ebpf native routing needs the hosts on one subnet: %s (%s) and %s (%s) are not", h.Name, h.Underlay, r.Name, r.Underlay)
			}
			if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: r.PodCIDR, Via: r.IP, Dev: h.Dev}); err != nil {
				return err
			}
		}
		if err := m.datapath().setupHost(ctx, l, h); err != nil {
			return fmt.Errorf("ebpf on %s: %w", h.Name, err)
		}
	}
	return nil
}

// AddPod implements netmode.Mode. Equivalent to:
//
//	ip netns add POD
//	ip -n H link add lxcPOD address HOSTMAC mtu MTU type veth peer name eth0 address PODMAC mtu MTU netns POD
//	ip -n H link set lxcPOD up
//	ip -n H route add IP/32 dev lxcPOD scope link
//	ip -n POD addr add IP/32 dev eth0
//	ip -n POD link set eth0 up
//	ip -n POD neigh add GW lladdr HOSTMAC dev eth0 nud permanent
//	ip -n POD route add default via GW dev eth0 onlink
//
// then the endpoint into the host's map and from_container on lxcPOD.
func (m Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	pmac, hmac := MACs(ip)
	hv, gw := HostVeth(name), h.PodGateway()
	if err := l.Apply(ctx, h.NetNS,
		iproute.Veth{Name: hv, Address: hmac, MTU: l.Cfg.MTU, Peer: "eth0", PeerAddress: pmac, PeerNS: pod.NetNS},
		iproute.Up(hv),
		iproute.Route{Dst: netip.PrefixFrom(ip, 32), Dev: hv, ScopeLink: true},
	); err != nil {
		return nil, fmt.Errorf("wiring pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, pod.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(ip, 32), Dev: "eth0"},
		iproute.Up("eth0"),
		iproute.Neigh{IP: gw, MAC: hmac, Dev: "eth0"},
		iproute.Route{Via: gw, Dev: "eth0", OnLink: true},
	); err != nil {
		return nil, fmt.Errorf("wiring pod %s: %w", name, err)
	}
	if err := l.WaitOperUp(ctx, h.NetNS, hv, 2*time.Second); err != nil {
		return nil, fmt.Errorf("pod %s: %w", name, err)
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	if err := m.datapath().addEndpoint(ctx, l, h, Endpoint{IP: ip, HostVeth: hv, MAC: pmac, HostMAC: hmac}); err != nil {
		return nil, fmt.Errorf("ebpf endpoint for pod %s: %w", name, err)
	}
	netmode.MarkPhase(ctx, netmode.PhaseControlPlane)
	return pod, nil
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// ErrNotSupported says this kernel cannot run the datapath.
var ErrNotSupported = errors.New("kernel lacks what the ebpf datapath needs")

// Probe checks, once, that the kernel has the helpers and attach point the
// programs use, naming what is missing.
func Probe() error {
	probeOnce.Do(func() {
		for _, fn := range []asm.BuiltinFunc{asm.FnRedirectPeer, asm.FnRedirectNeigh} {
			if err := features.HaveProgramHelper(cebpf.SchedCLS, fn); err != nil {
				probeErr = fmt.Errorf("%w: helper %s: %v; needs Linux 5.10+", ErrNotSupported, fn, err)
				return
			}
		}
	})
	return probeErr
}

var (
	probeOnce sync.Once
	probeErr  error
)

// kernelDP is the real datapath: for the one lab its mode instance set up,
// per host, the loaded objects and the links attaching them.
type kernelDP struct {
	mu    sync.Mutex
	lab   *lab.Lab
	hosts map[*lab.Host]*hostDP
}

type hostDP struct {
	objs  datapathObjects
	links []link.Link
}

func (d *hostDP) close() error {
	var errs []error
	for _, lk := range d.links {
		errs = append(errs, lk.Close())
	}
	errs = append(errs, d.objs.Close())
	return errors.Join(errs...)
}

func (k *kernelDP) host(l *lab.Lab, h *lab.Host) *hostDP {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lab != l {
		return nil
	}
	return k.hosts[h]
}

func (k *kernelDP) setupHost(_ context.Context, l *lab.Lab, h *lab.Host) error {
	if err := Probe(); err != nil {
		return err
	}
	d := &hostDP{}
	if err := loadDatapathObjects(&d.objs, nil); err != nil {
		return fmt.Errorf("loading programs: %w", err)
	}
	k.mu.Lock()
	if k.lab != nil && k.lab != l {
		other := k.lab.ID
		k.mu.Unlock()
		_ = d.close()
		return fmt.Errorf("this ebpf instance already serves lab %s; each deployment needs its own (netmode.Get)", other)
	}
	first := k.lab == nil
	if first {
		k.lab, k.hosts = l, map[*lab.Host]*hostDP{}
	}
	k.hosts[h] = d
	k.mu.Unlock()
	if first {
		l.OnTeardown(func() error { return k.release(l) })
	}
	var idx int
	err := lab.InNetNS(h.NetNS, func() error {
		ifc, err := net.InterfaceByName(h.Dev)
		if err != nil {
			return err
		}
		idx = ifc.Index
		lk, err := link.AttachTCX(link.TCXOptions{Interface: idx, Program: d.objs.FromNetdev, Attach: cebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("attaching from_netdev to %s: %w", h.Dev, err)
		}
		d.links = append(d.links, lk)
		return nil
	})
	if err != nil {
		return err
	}
	flags, err := configFlags(&l.Cfg)
	if err != nil {
		return err
	}
	cfg := datapathConfig{UnderlayIfindex: uint32(idx), PodNet: be32(l.Cfg.PodNet.Masked().Addr()), PodMask: mask(l.Cfg.PodNet.Bits()), Flags: flags}
	return d.objs.ConfigMap.Put(uint32(0), cfg)
}

func (k *kernelDP) addEndpoint(_ context.Context, l *lab.Lab, h *lab.Host, ep Endpoint) error {
	d := k.host(l, h)
	if d == nil {
		return fmt.Errorf("no datapath on %s: Setup did not run", h.Name)
	}
	return lab.InNetNS(h.NetNS, func() error {
		ifc, err := net.InterfaceByName(ep.HostVeth)
		if err != nil {
			return err
		}
		v := datapathEndpoint{Ifindex: uint32(ifc.Index)}
		copy(v.Mac[:], ep.MAC)
		copy(v.HostMac[:], ep.HostMAC)
		if err := d.objs.Endpoints.Put(be32(ep.IP), v); err != nil {
			return fmt.Errorf("endpoint map: %w", err)
		}
		lk, err := link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: d.objs.FromContainer, Attach: cebpf.AttachTCXIngress})
		if err != nil {
			return fmt.Errorf("attaching from_container to %s: %w", ep.HostVeth, err)
		}
		k.mu.Lock()
		d.links = append(d.links, lk)
		k.mu.Unlock()
		return nil
	})
}

// release closes every link and object of lab l.
func (k *kernelDP) release(l *lab.Lab) error {
	k.mu.Lock()
	var hosts map[*lab.Host]*hostDP
	if k.lab == l {
		hosts = k.hosts
		k.lab, k.hosts = nil, nil
	}
	k.mu.Unlock()
	var errs []error
	for _, d := range hosts {
		errs = append(errs, d.close())
	}
	return errors.Join(errs...)
}

// Stats is what the programs of lab l counted on host h: packets redirected
// to a local pod, to the underlay, and passed to the stack.
func (m Mode) Stats(l *lab.Lab, h *lab.Host) (local, remote, pass uint64, err error) {
	var d *hostDP
	if k, ok := m.dp.(*kernelDP); ok {
		d = k.host(l, h)
	}
	if d == nil {
		return 0, 0, 0, fmt.Errorf("no datapath on %s", h.Name)
	}
	sum := func(k uint32) (uint64, error) {
		var per []uint64
		if err := d.objs.Stats.Lookup(k, &per); err != nil {
			return 0, err
		}
		var n uint64
		for _, v := range per {
			n += v
		}
		return n, nil
	}
	if local, err = sum(0); err != nil {
		return
	}
	if remote, err = sum(1); err != nil {
		return
	}
	pass, err = sum(2)
	return
}

// be32 is an IPv4 address as the programs compare it: network byte order
// read as a host-order uint32.
func be32(a netip.Addr) uint32 {
	b := a.As4()
	return binary.NativeEndian.Uint32(b[:])
}

func mask(bits int) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], ^uint32(0)<<(32-bits))
	return binary.NativeEndian.Uint32(b[:])
}
