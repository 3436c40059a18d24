// Package flanneludp is Flannel's udp backend: each host leases a /24 of the
// pod network in etcd (/coreos.com/network/subnets/10.244.N.0-24 holding its
// public IP), pods sit on the cni0 bridge, and a TUN device flannel0 holding
// the whole pod network (/16) catches everything for other hosts' subnets.
// flanneld reads each packet out of flannel0, looks up the lease of its
// destination's subnet and sends it in a UDP datagram to that host's port
// 8285, whose flanneld writes it back into its own flannel0: two crossings
// of the user/kernel boundary and two copies on each side. Here the daemon
// is `cnperf tund` (see internal/tund), following the leases in a real etcd.
//
// Mode options: controlplane=off gives each daemon its routes on the command
// line instead of etcd leases; sockbuf=BYTES sizes the daemons' UDP socket
// buffers (default: the kernel's, as flanneld leaves them).
package flanneludp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/ctrlplane"
	"github.com/cnperf/cnperf/internal/ctrlplane/etcd"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/tund"
)

// Flannel's names and numbers.
const (
	Device      = "flannel0"
	BridgeName  = "cni0"
	Port        = 8285
	Overhead    = 28 // outer IP 20 + UDP 8
	SubnetsKey  = "/coreos.com/network/subnets/"
	ConfigKey   = "/coreos.com/network/config"
	BackendType = "udp"
)

func init() { netmode.Register(func() netmode.Mode { return &Mode{} }) }

// Mode is Flannel udp; an instance serves one lab at a time.
type Mode struct {
	st netmode.State[state]
}

type state struct {
	kv    *etcd.Server
	mu    sync.Mutex
	procs []*lab.Proc
}

// Name implements netmode.Mode.
func (*Mode) Name() string { return "flannel-udp" }

// Summary implements netmode.Mode.
func (*Mode) Summary() string {
	return "Flannel udp: user-space daemon between TUN flannel0 and UDP 8285, subnet leases in etcd"
}

// Placements implements netmode.Mode.
func (*Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Refuse implements netmode.Refuser.
func (*Mode) Refuse(p ground.Placement) string {
	if p == ground.SamePod {
		return "flannel-udp connects pods; containers in one pod share a namespace and never use it"
	}
	return ""
}

// Options implements netmode.Mode.
func (*Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "controlplane", Kind: option.Enum, Values: []string{"etcd", "on", "off", "static"}, Default: "etcd",
			Help: "etcd (on): subnet leases in a real etcd; off (static): routes given to the daemons"},
		{Name: "sockbuf", Kind: option.Int, Help: "the daemons' UDP socket buffers, bytes (default: the kernel's)"},
	}
}

// Requires implements netmode.Mode.
func (*Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_TUN", What: "TUN/TAP devices"},
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
		},
		Commands:     []string{"ip"},
		ControlPlane: []string{"etcd", "etcdctl"},
	}
}

// LeaseKey is the etcd key of host h's subnet lease.
func LeaseKey(h *lab.Host) string {
	return SubnetsKey + strings.Replace(h.PodCIDR.String(), "/", "-", 1)
}

func controlPlane(l *lab.Lab) (bool, error) {
	switch v := l.Cfg.ModeOpt("controlplane", "etcd"); v {
	case "etcd", "on":
		return true, nil
	case "off", "static":
		return false, nil
	default:
		return false, fmt.Errorf("flannel-udp: controlplane=%q; use etcd or off", v)
	}
}

// Setup implements netmode.Mode: etcd and the leases, then on each host the
// bridge, flannel0 and the daemon, waiting until every daemon routes to
// every other host.
func (m *Mode) Setup(ctx context.Context, l *lab.Lab) error {
	cp, err := controlPlane(l)
	if err != nil {
		return err
	}
	daemon, err := tund.Command()
	if err != nil {
		return err
	}
	st := &state{}
	if err := m.st.Bind(m.Name(), l, st); err != nil {
		return err
	}
	if cp {
		if st.kv, err = etcd.Start(ctx, l); err != nil {
			return err
		}
		conf, _ := json.Marshal(map[string]any{"Network": l.Cfg.PodNet.String(), "SubnetLen": 24, "Backend": map[string]any{"Type": BackendType, "Port": Port}})
		if err := st.kv.Put(ctx, l, l.Hosts[0].NetNS, ConfigKey, string(conf)); err != nil {
			return err
		}
	}
	mtu := l.Cfg.MTU - Overhead
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, mtu); err != nil {
			return err
		}
		if err := l.Apply(ctx, h.NetNS,
			iproute.Tuntap{Name: Device, Mode: "tun"},
			iproute.LinkSet{Name: Device, MTU: mtu},
			// the lease's address with the whole network's prefix: the
			// kernel then routes every other host's subnet into flannel0
			iproute.Addr{Prefix: netip.PrefixFrom(h.PodCIDR.Addr(), l.Cfg.PodNet.Bits()), Dev: Device},
			iproute.Up(Device),
		); err != nil {
			return fmt.Errorf("flannel0 on %s: %w", h.Name, err)
		}
		if cp {
			lease, _ := json.Marshal(map[string]any{"PublicIP": h.IP.String(), "BackendType": BackendType})
			if err := st.kv.Put(ctx, l, h.NetNS, LeaseKey(h), string(lease)); err != nil {
				return err
			}
		}
	}
	for _, h := range l.Hosts {
		argv := append(append([]string{}, daemon...), "--dev", Device, "--listen", netip.AddrPortFrom(h.IP, Port).String(), "--state", l.Dir)
		if cp {
			argv = append(argv, "--etcd", st.kv.URL, "--prefix", SubnetsKey, "--peer-port", fmt.Sprint(Port))
		} else {
			for _, r := range l.Hosts {
				if r != h {
					argv = append(argv, "--route", r.PodCIDR.String()+"="+netip.AddrPortFrom(r.IP, Port).String())
				}
			}
		}
		if b := l.Cfg.ModeOpt("sockbuf", ""); b != "" {
			argv = append(argv, "--sockbuf", b) // the daemon's UDP buffers, bytes
		}
		p, err := ctrlplane.Start(l, h.NetNS, "flanneld-"+h.Name, argv...)
		if err != nil {
			return err
		}
		st.mu.Lock()
		st.procs = append(st.procs, p)
		st.mu.Unlock()
	}
	for i, h := range l.Hosts {
		want := fmt.Sprintf("routes=%d", len(l.Hosts)-1)
		if err := ctrlplane.WaitLog(ctx, l, st.procs[i], "flanneld-"+h.Name, want, 15*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// AddPod implements netmode.Mode: a pod on cni0; nothing to register, the
// host's lease already covers it.
func (*Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := podnet.AttachPod(ctx, l, h, name, BridgeName, l.Cfg.MTU-Overhead)
	if err != nil {
		return nil, err
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	return pod, nil
}

// Expose implements netmode.Mode.
func (*Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// DaemonCPUSeconds implements netmode.DaemonCPU.
func (m *Mode) DaemonCPUSeconds(l *lab.Lab) float64 {
	st := m.st.Of(l)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	procs := append([]*lab.Proc(nil), st.procs...)
	st.mu.Unlock()
	return ctrlplane.ProcsCPU(procs)
}
