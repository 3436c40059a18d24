// Package calicobgp is Calico's routed BGP mode (no encapsulation): every
// host runs a real BIRD (Debian bird2) that announces the host's pod block
// to its peers over the underlay, in a full iBGP mesh (AS 64512, as Calico
// defaults to) or through a route reflector; BIRD installs what it learns in
// the kernel. Pods hang off the host on a bare veth (cali<pod> on the host
// side, no bridge), each with a /32 route on the host and its default
// route via 169.254.1.1, an address nobody has: the host's veth answers ARP
// for it by proxy-ARP, exactly as Calico's Felix wires a workload.
//
// Mode options (cnperf run --mode-opt):
//
//	bgp=mesh|rr          full mesh (default) or h1 as route reflector
//	bgp-timeout=DURATION how long to wait for sessions and routes (default 30s)
//	block=N              IPAM block prefix length, Calico's blockSize (default
//	                     26; 32 announces every pod on its own)
//	controlplane=off     no BIRD: each host's whole range routed statically
//
// Like Calico's IPAM, a host claims a block when its first pod in it is
// created; its BIRD is then reconfigured to announce the block, and the pod
// is reachable once every other host has installed the route. Setup only
// waits for the BGP sessions to be established.
package calicobgp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/ctrlplane"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// Calico's numbers.
const (
	AS        = 64512
	GatewayIP = "169.254.1.1"
)

// gatewayIP is GatewayIP, parsed.
var gatewayIP = netip.MustParseAddr(GatewayIP)

// ErrNotConverged is returned when BGP did not install every route in time.
var ErrNotConverged = errors.New("bgp did not converge")

func init() { netmode.Register(func() netmode.Mode { return &Mode{} }) }

// Mode is Calico BGP; an instance serves one lab at a time.
type Mode struct {
	st netmode.State[labState]
	// LookPath finds programs (default exec.LookPath); tests replace it
	// to play a machine without BIRD.
	LookPath func(string) (string, error)
}

// Name implements netmode.Mode.
func (*Mode) Name() string { return "calico-bgp" }

// Summary implements netmode.Mode.
func (*Mode) Summary() string {
	return "Calico BGP: BIRD per host announcing its pod block (full mesh or route reflector), pods on cali veths with /32 routes and the 169.254.1.1 proxy-ARP gateway"
}

// Placements implements netmode.Mode.
func (*Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode.
func (*Mode) Options() []option.Spec {
	return []option.Spec{
		{Name: "bgp", Kind: option.Enum, Values: []string{"mesh", "rr"}, Default: "mesh",
			Help: "full iBGP mesh, or h1 as route reflector"},
		{Name: "bgp-timeout", Kind: option.Duration, Default: "30s",
			Help: "how long to wait for sessions and routes"},
		{Name: "block", Kind: option.Int, Default: "26",
			Help: "IPAM block prefix length, Calico's blockSize: 24 to 32 (32 announces every pod on its own)"},
		{Name: "controlplane", Kind: option.Enum, Values: []string{"on", "off"}, Default: "on",
			Help: "off: no BIRD, each host's whole range routed statically"},
	}
}

// Requires implements netmode.Mode.
func (*Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel:       []netmode.KernelFeature{{Config: "CONFIG_VETH", What: "veth pairs"}},
		Commands:     []string{"ip"},
		ControlPlane: []string{"bird", "birdc"},
	}
}

// Options are the mode's knobs, parsed from lab.Config.ModeOptions.
type Options struct {
	Reflector    bool // h1 reflects routes; the others peer only with it
	Timeout      time.Duration
	ControlPlane bool
	Block        int // IPAM block size (prefix length), Calico's blockSize
}

// ParseOptions reads and validates the mode options.
func ParseOptions(c *lab.Config) (Options, error) {
	o := Options{Timeout: 30 * time.Second, ControlPlane: true, Block: 26}
	switch v := c.ModeOpt("bgp", "mesh"); v {
	case "mesh":
	case "rr":
		o.Reflector = true
	default:
		return o, fmt.Errorf("calico-bgp: bgp=%s; use bgp=mesh or bgp=rr", v)
	}
	if v := c.ModeOpt("bgp-timeout", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return o, fmt.Errorf("calico-bgp: bgp-timeout=%s; use a duration such as 30s", v)
		}
		o.Timeout = d
	}
	switch v := c.ModeOpt("controlplane", "on"); v {
	case "on":
	case "off":
		o.ControlPlane = false
	default:
		return o, fmt.Errorf("calico-bgp: controlplane=%s; use on or off", v)
	}
	if v := c.ModeOpt("block", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 24 || n > 32 {
			return o, fmt.Errorf("calico-bgp: block=%s; use a prefix length from 24 (a host's whole range) to 32 (one route per pod)", v)
		}
		o.Block = n
	}
	return o, nil
}

// writeConfig writes host h's BIRD configuration; a lab that only records
// commands (golden tests) has no folder for it, and BirdConfig's own tests
// cover the text.
func writeConfig(l *lab.Lab, h *lab.Host, text string) error {
	if ctrlplane.Recording(l) {
		return nil
	}
	if err := os.WriteFile(ConfigPath(l, h), []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing bird config: %w", err)
	}
	return nil
}

// ConfigPath and SocketPath are where host h's BIRD keeps its files.
func ConfigPath(l *lab.Lab, h *lab.Host) string { return filepath.Join(l.Dir, "bird-"+h.Name+".conf") }

// SocketPath is host h's BIRD control socket.
func SocketPath(l *lab.Lab, h *lab.Host) string { return filepath.Join(l.Dir, "bird-"+h.Name+".ctl") }

// peers lists whom h's BIRD peers with, and whether each is its RR client.
func peers(l *lab.Lab, h *lab.Host, o Options) (out []*lab.Host, client bool) {
	if o.Reflector && h.Index != 1 {
		return l.Hosts[:1], false
	}
	for _, r := range l.Hosts {
		if r != h {
			out = append(out, r)
		}
	}
	return out, o.Reflector
}

// BirdConfig is host h's BIRD configuration announcing blocks, the IPAM
// blocks affine to h. The timers are those of Calico's bird.cfg template
// (connect delay 2 s, scan time 2 s).
func BirdConfig(l *lab.Lab, h *lab.Host, o Options, blocks []netip.Prefix) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# cnperf calico-bgp, host %s\n", h.Name)
	fmt.Fprintf(&b, "router id %s;\n", h.IP)
	b.WriteString("log stderr all;\n\n")
	b.WriteString("protocol device {\n\tscan time 2;\n}\n\n")
	b.WriteString("# the IPAM blocks affine to this host: announced to peers, blackholed\n")
	b.WriteString("# locally (the pods' /32 routes are more specific)\n")
	b.WriteString("protocol static pods {\n\tipv4;\n")
	for _, blk := range blocks {
		fmt.Fprintf(&b, "\troute %s blackhole;\n", blk)
	}
	b.WriteString("}\n\n")
	b.WriteString("protocol kernel {\n\tscan time 2;\n\tipv4 {\n\t\timport none;\n\t\texport all;\n\t};\n}\n\n")
	export := `proto = "pods"`
	ps, client := peers(l, h, o)
	if client {
		export += " || source = RTS_BGP"
	}
	fmt.Fprintf(&b, "template bgp calico {\n\tlocal %s as %d;\n\tdirect;\n", h.IP, AS)
	fmt.Fprintf(&b, "\tipv4 {\n\t\tgateway direct;\n\t\timport all;\n\t\texport where %s;\n\t};\n", export)
	b.WriteString("\tconnect delay time 2;\n\tconnect retry time 5;\n\terror wait time 5, 30;\n}\n")
	for _, r := range ps {
		fmt.Fprintf(&b, "\nprotocol bgp peer_%s from calico {\n\tneighbor %s as %d;\n", r.Name, r.IP, AS)
		if client {
			b.WriteString("\trr client;\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func (m *Mode) lookPath(file string) (string, error) {
	if m.LookPath != nil {
		return m.LookPath(file)
	}
	return exec.LookPath(file)
}

// labState is what the mode remembers about its lab.
type labState struct {
	opts   Options
	mu     sync.Mutex
	phases map[string]time.Duration
	blocks map[*lab.Host][]netip.Prefix // IPAM blocks affine to each host
}

// SetupPhases reports how long Setup spent bringing BGP up on lab l
// ("bgp_convergence": every session established), for the startup workload.
func (m *Mode) SetupPhases(l *lab.Lab) map[string]time.Duration {
	st := m.st.Of(l)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	out := map[string]time.Duration{}
	for k, v := range st.phases {
		out[k] = v
	}
	return out
}

// Setup implements netmode.Mode: starts BIRD on every host and waits until
// every BGP session is established. No block is announced yet: as with
// Calico's IPAM, a host claims a block when its first pod needs one.
func (m *Mode) Setup(ctx context.Context, l *lab.Lab) error {
	o, err := ParseOptions(&l.Cfg)
	if err != nil {
		return err
	}
	st := &labState{opts: o, phases: map[string]time.Duration{}, blocks: map[*lab.Host][]netip.Prefix{}}
	if err := m.st.Bind(m.Name(), l, st); err != nil {
		return err
	}
	for _, h := range l.Hosts {
		if err := PrepareHost(ctx, l, h); err != nil {
			return err
		}
	}
	if !o.ControlPlane {
		return staticRoutes(ctx, l)
	}
	if _, err := m.lookPath("bird"); err != nil {
		return errors.New("calico-bgp needs the bird command (BIRD 2); install it (apt-get install bird2)")
	}
	for _, h := range l.Hosts {
		for _, r := range l.Hosts {
			if r != h && !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("calico-bgp without encapsulation needs the hosts on one subnet: %s (%s) and %s (%s) are not; use calico-ipip or cloud-routed", h.Name, h.Underlay, r.Name, r.Underlay)
			}
		}
	}
	t0 := time.Now()
	procs := map[*lab.Host]*lab.Proc{}
	for _, h := range l.Hosts {
		if err := writeConfig(l, h, BirdConfig(l, h, o, nil)); err != nil {
			return err
		}
		p, err := ctrlplane.Start(l, h.NetNS, "bird-"+h.Name, "bird", "-f", "-c", ConfigPath(l, h), "-s", SocketPath(l, h))
		if err != nil {
			return err
		}
		procs[h] = p
	}
	if err := waitEstablished(ctx, l, procs, o.Timeout); err != nil {
		return err
	}
	d := time.Since(t0)
	st.mu.Lock()
	st.phases["bgp_convergence"] = d
	st.mu.Unlock()
	netmode.MarkPhase(ctx, "bgp_convergence")
	return nil
}

// staticRoutes installs what BIRD would, without BIRD.
func staticRoutes(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		if err := l.Apply(ctx, h.NetNS, iproute.Route{Blackhole: true, Dst: h.PodCIDR}); err != nil {
			return err
		}
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			if !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("calico-bgp without encapsulation needs the hosts on one subnet: %s and %s are not", h.Name, r.Name)
			}
			if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: r.PodCIDR, Via: r.IP, Dev: h.Dev}); err != nil {
				return err
			}
		}
	}
	return nil
}

// NotEstablished lists the BGP sessions that are not up, given the output
// of `birdc show protocols`.
func NotEstablished(protocols string) []string {
	var down []string
	for _, line := range strings.Split(protocols, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "peer_") && f[len(f)-1] != "Established" {
			down = append(down, f[0])
		}
	}
	return down
}

func waitEstablished(ctx context.Context, l *lab.Lab, procs map[*lab.Host]*lab.Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var waiting []string
		var last string
		for _, h := range l.Hosts {
			if p := procs[h]; p != nil { // nil: only recorded
				select {
				case <-p.Done():
					return fmt.Errorf("bird on %s exited: %s", h.Name, l.LogTail("bird-"+h.Name, 5))
				default:
				}
			}
			// a read, not a change: not logged as a lab command; before
			// BIRD has made its socket this fails, which is waiting too
			out, err := l.Cfg.Exec.Run(ctx, []string{"birdc", "-s", SocketPath(l, h), "show", "protocols"})
			last = string(out)
			down := NotEstablished(last)
			if err != nil || len(down) > 0 || !strings.Contains(last, "peer_") {
				waiting = append(waiting, fmt.Sprintf("%s: %s not established", h.Name, strings.Join(down, ",")))
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %v (%s); raise --mode-opt bgp-timeout", ErrNotConverged, timeout, strings.Join(waiting, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// claimBlock makes sure the IPAM block holding ip is affine to h and
// announced, as Calico's IPAM and BIRD do for a node's first pod in a new
// block: BIRD gets the block in its config (`birdc configure`), and the
// pod is reachable once every other host has the route. It reports
// whether a new block was claimed.
func claimBlock(ctx context.Context, l *lab.Lab, st *labState, h *lab.Host, ip netip.Addr) (bool, error) {
	o := st.opts
	blk := netip.PrefixFrom(ip, o.Block).Masked()
	st.mu.Lock()
	for _, b := range st.blocks[h] {
		if b == blk {
			st.mu.Unlock()
			return false, nil
		}
	}
	st.blocks[h] = append(st.blocks[h], blk)
	blocks := append([]netip.Prefix(nil), st.blocks[h]...)
	st.mu.Unlock()
	if err := writeConfig(l, h, BirdConfig(l, h, o, blocks)); err != nil {
		return false, err
	}
	if _, err := l.Run(ctx, "birdc", "-s", SocketPath(l, h), "configure"); err != nil {
		return false, fmt.Errorf("announcing block %s from %s: %w", blk, h.Name, err)
	}
	return true, waitAnnounced(ctx, l, h, blk, o.Timeout)
}

// waitAnnounced waits until every other host has a BGP route to block blk
// of host h.
func waitAnnounced(ctx context.Context, l *lab.Lab, h *lab.Host, blk netip.Prefix, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, r := range l.Hosts {
		for r != h {
			out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", r.NetNS, "route", "show", "proto", "bird", "exact", blk.String()})
			if err != nil {
				return err
			}
			if strings.Contains(string(out), " via ") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%w: %s has no route to %s's block %s after %v", ErrNotConverged, r.Name, h.Name, blk, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// PrepareHost gives host h what Calico's pod gateway needs: the proxy-ARP
// reply for 169.254.1.1 needs a route to it that does not point back at the
// pod, which a real node's default route provides. Equivalent to:
//
//	ip -n H route add 169.254.1.1/32 dev eth0 scope link
func PrepareHost(ctx context.Context, l *lab.Lab, h *lab.Host) error {
	if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: netip.PrefixFrom(gatewayIP, 32), Dev: h.Dev, ScopeLink: true}); err != nil {
		return fmt.Errorf("calico gateway route on %s: %w", h.Name, err)
	}
	return nil
}

// HostVeth is the host side of a pod's veth, named the Calico way.
func HostVeth(pod string) string { return "cali" + pod }

// AddPod implements netmode.Mode. Equivalent to:
//
//	ip netns add POD
//	ip -n H link add caliPOD mtu MTU type veth peer name eth0 mtu MTU netns POD
//	ip netns exec H sysctl -w net.ipv4.conf.caliPOD.proxy_arp=1
//	ip netns exec H sysctl -w net.ipv4.neigh.caliPOD.proxy_delay=0
//	ip -n H link set caliPOD up
//	ip -n H route add IP/32 dev caliPOD scope link
//	ip -n POD addr add IP/32 dev eth0
//	ip -n POD link set eth0 up
//	ip -n POD route add default via 169.254.1.1 dev eth0 onlink
func (m *Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	st := m.st.Of(l)
	if st == nil {
		// without a control plane there is nothing to announce, and so
		// nothing Setup must have prepared
		if o, err := ParseOptions(&l.Cfg); err != nil || o.ControlPlane {
			return nil, errors.New("calico-bgp: AddPod before Setup")
		}
	}
	pod, err := AttachPod(ctx, l, h, name, l.Cfg.MTU)
	if err != nil {
		return nil, err
	}
	if st != nil && st.opts.ControlPlane {
		if _, err := claimBlock(ctx, l, st, h, pod.IP); err != nil {
			return nil, err
		}
		netmode.MarkPhase(ctx, "bgp_announce")
	}
	return pod, nil
}

// AttachPod wires a pod the way Calico's CNI plugin and Felix do (see
// Mode.AddPod), with the given MTU; calico-ipip shares it.
func AttachPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string, mtuBytes int) (*lab.Pod, error) {
	pod, err := netmode.NewPod(ctx, l, h, name)
	if err != nil {
		return nil, err
	}
	ip := pod.IP
	hv := HostVeth(name)
	if err := l.Apply(ctx, h.NetNS, iproute.Veth{Name: hv, MTU: mtuBytes, Peer: "eth0", PeerNS: pod.NetNS}); err != nil {
		return nil, fmt.Errorf("creating veth for pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, h.NetNS,
		iproute.SysctlSet("net.ipv4.conf."+hv+".proxy_arp", "1"),
		iproute.SysctlSet("net.ipv4.neigh."+hv+".proxy_delay", "0"),
	); err != nil {
		return nil, err
	}
	if err := l.Apply(ctx, h.NetNS,
		iproute.Up(hv),
		iproute.Route{Dst: netip.PrefixFrom(ip, 32), Dev: hv, ScopeLink: true},
	); err != nil {
		return nil, fmt.Errorf("wiring pod %s: %w", name, err)
	}
	if err := l.Apply(ctx, pod.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(ip, 32), Dev: "eth0"},
		iproute.Up("eth0"),
		iproute.Route{Via: gatewayIP, Dev: "eth0", OnLink: true},
	); err != nil {
		return nil, fmt.Errorf("wiring pod %s: %w", name, err)
	}
	// ready once the host's end has its carrier: before, the pod's first
	// ARP request for the gateway goes unanswered and is retried a second
	// later
	if err := l.WaitOperUp(ctx, h.NetNS, hv, 2*time.Second); err != nil {
		return nil, fmt.Errorf("pod %s: %w", name, err)
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	return pod, nil
}

// Expose implements netmode.Mode.
func (*Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
