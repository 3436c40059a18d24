// Package weave is Weave Net's sleeve datapath: every host runs a router in
// user space; pods sit on one flat subnet (here the whole pod network, /16)
// attached to the host's "weave" bridge; the router captures the frames on
// that bridge (here through a TAP port, weavetap), learns behind which peer
// each MAC lives, and carries frames to peers in UDP datagrams on port 6784,
// flooding broadcasts (ARP) to every peer. Peers are given on the command
// line, as `weave launch PEER...` does; there is no KV store.
//
// Mode options: encrypt=aes-gcm seals every datagram (AES-256-GCM, key from
// password=..., default "cnperf-lab"), as Weave's encrypted sleeve does
// with NaCl, to show the cost of encryption; encrypt=none (default) does not.
// sockbuf=BYTES sizes the routers' UDP socket buffers.
package weave

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/ctrlplane"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/tund"
)

// Weave's names and numbers.
const (
	BridgeName = "weave"
	TapName    = "weavetap"
	Port       = 6784
	Overhead   = 20 + 8 + 14 // outer IP + UDP + the inner Ethernet header
)

func init() { netmode.Register(func() netmode.Mode { return &Mode{} }) }

// Mode is Weave sleeve; an instance serves one lab at a time.
type Mode struct {
	st netmode.State[state]
}

// state is what the mode keeps about its lab: the routers.
type state struct {
	mu    sync.Mutex
	procs []*lab.Proc
}

// Name implements netmode.Mode.
func (*Mode) Name() string { return "weave" }

// Summary implements netmode.Mode.
func (*Mode) Summary() string {
	return "Weave sleeve: user-space router between the weave bridge (TAP) and UDP 6784; --mode-opt encrypt=aes-gcm"
}

// Placements implements netmode.Mode.
func (*Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Refuse implements netmode.Refuser.
func (*Mode) Refuse(p ground.Placement) string {
	if p == ground.SamePod {
		return "weave connects pods; containers in one pod share a namespace and never use it"
	}
	return ""
}

// Options implements netmode.Mode.
func (*Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "encrypt", Kind: option.Enum, Values: []string{"none", "aes-gcm", "off", "on"}, Default: "none",
			Help: "aes-gcm (on) seals every datagram, as Weave's encrypted sleeve; none (off) does not"},
		{Name: "password", Kind: option.String, Default: "cnperf-lab", Help: "the key's password when encrypted"},
		{Name: "sockbuf", Kind: option.Int, Help: "the routers' UDP socket buffers, bytes (default: the kernel's)"},
	}
}

// Requires implements netmode.Mode.
func (*Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_TUN", What: "TUN/TAP devices"},
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
		},
		Commands: []string{"ip"},
	}
}

// options reads encrypt= and password=.
func options(l *lab.Lab) (encrypt bool, password string, err error) {
	switch v := l.Cfg.ModeOpt("encrypt", "none"); v {
	case "none", "off", "":
	case "aes-gcm", "on":
		encrypt = true
	default:
		return false, "", fmt.Errorf("weave: encrypt=%q; use none or aes-gcm", v)
	}
	return encrypt, l.Cfg.ModeOpt("password", "cnperf-lab"), nil
}

// PodMTU is the MTU that keeps a sealed frame in one underlay packet.
func PodMTU(l *lab.Lab) int {
	enc, _, _ := options(l)
	m := l.Cfg.MTU - Overhead
	if enc {
		m -= tund.Overhead
	}
	return m
}

// Setup implements netmode.Mode: on each host the weave bridge, its TAP
// port and the router, peered with every other host.
func (m *Mode) Setup(ctx context.Context, l *lab.Lab) error {
	enc, password, err := options(l)
	if err != nil {
		return err
	}
	daemon, err := tund.Command()
	if err != nil {
		return err
	}
	pwFile := filepath.Join(l.Dir, "weave-password")
	if enc && !ctrlplane.Recording(l) {
		if err := os.WriteFile(pwFile, []byte(password), 0o600); err != nil {
			return fmt.Errorf("weave password: %w", err)
		}
	}
	mtu := PodMTU(l)
	for _, h := range l.Hosts {
		if err := l.Apply(ctx, h.NetNS,
			iproute.Bridge{Name: BridgeName, MTU: mtu},
			iproute.Up(BridgeName),
			iproute.Tuntap{Name: TapName, Mode: "tap"},
			iproute.LinkSet{Name: TapName, MTU: mtu, Master: BridgeName, Up: true},
		); err != nil {
			return fmt.Errorf("weave bridge on %s: %w", h.Name, err)
		}
	}
	st := &state{}
	if err := m.st.Bind(m.Name(), l, st); err != nil {
		return err
	}
	var procs []*lab.Proc
	for _, h := range l.Hosts {
		argv := append(append([]string{}, daemon...), "--l2", "--dev", TapName, "--listen", netip.AddrPortFrom(h.IP, Port).String(), "--state", l.Dir)
		for _, r := range l.Hosts {
			if r != h {
				argv = append(argv, "--peer", netip.AddrPortFrom(r.IP, Port).String())
			}
		}
		if enc {
			argv = append(argv, "--password-file", pwFile)
		}
		if b := l.Cfg.ModeOpt("sockbuf", ""); b != "" {
			argv = append(argv, "--sockbuf", b) // the daemon's UDP buffers, bytes
		}
		p, err := ctrlplane.Start(l, h.NetNS, "weave-"+h.Name, argv...)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		st.mu.Lock()
		st.procs = append(st.procs, p)
		st.mu.Unlock()
	}
	for i, h := range l.Hosts {
		want := fmt.Sprintf("ready dev=%s l2=true listen=%s encrypt=%v", TapName, netip.AddrPortFrom(h.IP, Port), enc)
		if err := ctrlplane.WaitLog(ctx, l, procs[i], "weave-"+h.Name, want, 15*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// AddPod implements netmode.Mode: a veth into the weave bridge and an
// address of the flat pod network.
func (*Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	mtu := PodMTU(l)
	hv := podnet.HostVeth(name)
	if err := l.Apply(ctx, h.NetNS,
		iproute.Veth{Name: hv, MTU: mtu, Peer: "eth0", PeerNS: pod.NetNS},
		iproute.LinkSet{Name: hv, Master: BridgeName, Up: true},
	); err != nil {
		return nil, fmt.Errorf("attaching pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, pod.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(ip, l.Cfg.PodNet.Bits()), Dev: "eth0"},
		iproute.Up("eth0"),
	); err != nil {
		return nil, fmt.Errorf("attaching pod %s: %w", name, err)
	}
	// ready once its bridge port forwards (as the CNI bridge plugin waits)
	if err := l.WaitOperUp(ctx, h.NetNS, hv, 2*time.Second); err != nil {
		return nil, fmt.Errorf("pod %s: bridge port: %w", name, err)
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

// Traits implements netmode.TraitDeclarer.
func (*Mode) Traits() netmode.Traits {
	return netmode.Traits{Encryption: "encrypt=aes-gcm"}
}
