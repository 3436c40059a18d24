// Package dockeroverlay is Docker's native overlay network (libnetwork's
// overlay driver): one subnet spanning every host, and on each host an
// overlay namespace ("ov-" in Docker) holding a bridge br0 and a VXLAN device
// (VNI 4097, UDP 4789, learning off, ARP proxy on) that was created in the
// host's namespace and moved into the overlay one, so its UDP socket stays
// on the host's underlay. Containers are attached by a veth whose far end
// sits in the overlay namespace's bridge. Every endpoint (IP, MAC, the
// host's VTEP) is registered in the KV store (a real etcd, see ctrlplane/etcd)
// and each host's daemon logic reads the mappings back to program static
// FDB and neighbour entries on its VXLAN device, as Docker did with
// --cluster-store.
//
// Mode options: controlplane=off programs the same entries directly, with no
// etcd, to separate the control plane's cost from the datapath's.
package dockeroverlay

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/ctrlplane/etcd"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// Docker's names and numbers.
const (
	VNI       = 4097 // libnetwork allocates overlay VNIs from 4096 up
	Port      = 4789 // IANA VXLAN, Docker's default data port
	Device    = "vxlan0"
	Bridge    = "br0"
	Overhead  = 50
	NetworkID = "cnperf0"
	// KeyRoot is where endpoint mappings live in the KV store.
	KeyRoot = "/docker/network/v1.0/"
)

func init() { netmode.Register(func() netmode.Mode { return &Mode{} }) }

// Mode is Docker's overlay network; an instance serves one lab at a time.
type Mode struct {
	st netmode.State[state]
}

// Endpoint is one container's mapping, as stored in the KV store.
type Endpoint struct {
	Name string `json:"name"`
	IP   string `json:"ip"`   // with the overlay prefix, 10.244.1.2/16
	MAC  string `json:"mac"`  // Docker derives it from the IP: 02:42:IP
	VTEP string `json:"vtep"` // the host's underlay address
}

type state struct {
	mu      sync.Mutex
	kv      *etcd.Server // nil: controlplane=off
	static  []Endpoint   // controlplane=off: the mappings a KV would hold
	applied map[int]map[string]bool
}

// Name implements netmode.Mode.
func (*Mode) Name() string { return "docker-overlay" }

// Summary implements netmode.Mode.
func (*Mode) Summary() string {
	return "Docker overlay: per-host overlay namespace with br0 + VXLAN 4097, endpoint mappings in etcd"
}

// Placements implements netmode.Mode.
func (*Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Refuse implements netmode.Refuser.
func (*Mode) Refuse(p ground.Placement) string {
	if p == ground.SamePod {
		return "docker-overlay connects containers; two containers in one pod share a namespace and never use it"
	}
	return ""
}

// Options implements netmode.Mode.
func (*Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "controlplane", Kind: option.Enum, Values: []string{"etcd", "on", "off", "static"}, Default: "etcd",
			Help: "etcd (on): endpoint mappings through a real etcd; off (static): programmed directly, no KV store"},
	}
}

// Requires implements netmode.Mode.
func (*Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_VXLAN", What: "VXLAN devices"},
			{Config: "CONFIG_BRIDGE", What: "Linux bridge"},
		},
		Commands:     []string{"ip", "bridge"},
		ControlPlane: []string{"etcd", "etcdctl"},
	}
}

// OverlayNS is host h's overlay namespace.
func OverlayNS(l *lab.Lab, h *lab.Host) string { return l.NSName(h.Name + "-ov1") }

// MAC is the address Docker gives a container: 02:42 and the IPv4 address.
func MAC(ip netip.Addr) string {
	b := ip.As4()
	return fmt.Sprintf("02:42:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3])
}

func controlPlane(l *lab.Lab) (bool, error) {
	switch v := l.Cfg.ModeOpt("controlplane", "etcd"); v {
	case "etcd", "on":
		return true, nil
	case "off", "static":
		return false, nil
	default:
		return false, fmt.Errorf("docker-overlay: controlplane=%q; use etcd or off", v)
	}
}

// Setup implements netmode.Mode: the KV store, then each host's overlay
// namespace with its bridge and VXLAN device.
func (m *Mode) Setup(ctx context.Context, l *lab.Lab) error {
	cp, err := controlPlane(l)
	if err != nil {
		return err
	}
	st := &state{applied: map[int]map[string]bool{}}
	if err := m.st.Bind(m.Name(), l, st); err != nil {
		return err
	}
	if cp {
		if st.kv, err = etcd.Start(ctx, l); err != nil {
			return err
		}
		netw, _ := json.Marshal(map[string]any{"id": NetworkID, "type": "overlay", "vni": VNI, "subnet": l.Cfg.PodNet.String()})
		if err := st.kv.Put(ctx, l, l.Hosts[0].NetNS, KeyRoot+"network/"+NetworkID, string(netw)); err != nil {
			return err
		}
	}
	mtu := l.Cfg.MTU - Overhead
	for _, h := range l.Hosts {
		ov, err := l.AddNS(ctx, h.Name+"-ov1")
		if err != nil {
			return err
		}
		// created on the host so that its socket is the host's, then moved
		if err := l.Apply(ctx, h.NetNS,
			iproute.VXLAN{Name: Device, MTU: mtu, VNI: VNI, Local: h.IP, Port: Port, Proxy: true},
			iproute.LinkSet{Name: Device, NetNS: ov},
		); err != nil {
			return fmt.Errorf("overlay namespace on %s: %w", h.Name, err)
		}
		if err := l.Apply(ctx, ov,
			iproute.Bridge{Name: Bridge, MTU: mtu},
			iproute.LinkSet{Name: Device, Master: Bridge, Up: true},
			iproute.Up(Bridge),
		); err != nil {
			return fmt.Errorf("overlay namespace on %s: %w", h.Name, err)
		}
	}
	return nil
}

// AddPod implements netmode.Mode: a veth from the pod into the overlay
// namespace's bridge, then the endpoint's registration and every host's
// FDB/neighbour entries for it.
func (m *Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	st := m.st.Of(l)
	if st == nil {
		return nil, fmt.Errorf("docker-overlay: AddPod before Setup")
	}
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	ov := OverlayNS(l, h)
	mtu := l.Cfg.MTU - Overhead
	hv := podnet.HostVeth(name)
	prefix := netip.PrefixFrom(ip, l.Cfg.PodNet.Bits())
	ep := Endpoint{Name: name, IP: prefix.String(), MAC: MAC(ip), VTEP: h.IP.String()}
	if err := l.Apply(ctx, ov,
		iproute.Veth{Name: hv, MTU: mtu, Peer: "eth0", PeerNS: pod.NetNS},
		iproute.LinkSet{Name: hv, Master: Bridge, Up: true},
	); err != nil {
		return nil, fmt.Errorf("attaching pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, pod.NetNS,
		iproute.LinkSet{Name: "eth0", Address: iproute.MustMAC(ep.MAC)},
		iproute.Addr{Prefix: prefix, Dev: "eth0"},
		iproute.Up("eth0"),
	); err != nil {
		return nil, fmt.Errorf("attaching pod %s: %w", name, err)
	}
	// ready once its bridge port forwards, as Docker waits for it
	if err := l.WaitOperUp(ctx, ov, hv, 2*time.Second); err != nil {
		return nil, fmt.Errorf("pod %s: bridge port: %w", name, err)
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	if err := m.register(ctx, l, st, h, ep); err != nil {
		return nil, err
	}
	netmode.MarkPhase(ctx, "kv_registration")
	for _, r := range l.Hosts {
		if err := m.sync(ctx, l, st, r); err != nil {
			return nil, err
		}
	}
	netmode.MarkPhase(ctx, netmode.PhaseControlPlane)
	return pod, nil
}

func (m *Mode) register(ctx context.Context, l *lab.Lab, st *state, h *lab.Host, ep Endpoint) error {
	if st.kv == nil {
		st.mu.Lock()
		st.static = append(st.static, ep)
		st.mu.Unlock()
		return nil
	}
	b, _ := json.Marshal(ep)
	return st.kv.Put(ctx, l, h.NetNS, KeyRoot+"endpoint/"+NetworkID+"/"+ep.Name, string(b))
}

// sync is host r's daemon: it reads every endpoint mapping and programs the
// remote ones it has not programmed yet. Equivalent to, per remote endpoint:
//
//	ip -n OV neigh add IP lladdr MAC dev vxlan0 nud permanent
//	bridge -n OV fdb add MAC dev vxlan0 dst VTEP self permanent
func (m *Mode) sync(ctx context.Context, l *lab.Lab, st *state, r *lab.Host) error {
	var eps []Endpoint
	if st.kv == nil {
		st.mu.Lock()
		eps = append(eps, st.static...)
		st.mu.Unlock()
	} else {
		kvs, err := st.kv.GetPrefix(ctx, l, r.NetNS, KeyRoot+"endpoint/"+NetworkID+"/")
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			var ep Endpoint
			if err := json.Unmarshal([]byte(kv.Value), &ep); err != nil {
				return fmt.Errorf("endpoint %s: %w", kv.Key, err)
			}
			eps = append(eps, ep)
		}
	}
	ov := OverlayNS(l, r)
	for _, ep := range eps {
		if ep.VTEP == r.IP.String() {
			continue // local: the bridge learns it
		}
		st.mu.Lock()
		if st.applied[r.Index] == nil {
			st.applied[r.Index] = map[string]bool{}
		}
		done := st.applied[r.Index][ep.IP]
		st.applied[r.Index][ep.IP] = true
		st.mu.Unlock()
		if done {
			continue
		}
		ip, err := netip.ParsePrefix(ep.IP)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", ep.Name, err)
		}
		mac, err := net.ParseMAC(ep.MAC)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", ep.Name, err)
		}
		vtep, err := netip.ParseAddr(ep.VTEP)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", ep.Name, err)
		}
		if err := l.Apply(ctx, ov,
			iproute.Neigh{IP: ip.Addr(), MAC: mac, Dev: Device},
			iproute.FDB{MAC: mac, Dev: Device, Dst: vtep},
		); err != nil {
			return err
		}
	}
	return nil
}

// Expose implements netmode.Mode.
func (*Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
