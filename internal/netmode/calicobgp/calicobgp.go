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
//	bgp-timeout=DURATION how long Setup waits for convergence (default 30s)
//	controlplane=off     no BIRD: the same routes installed statically
package calicobgp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
)

// Calico's numbers.
const (
	AS        = 64512
	GatewayIP = "169.254.1.1"
)

// ErrNotConverged is returned when BGP did not install every route in time.
var ErrNotConverged = errors.New("bgp did not converge")

func init() { netmode.Register(Mode{}) }

// Mode is Calico BGP.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "calico-bgp" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Calico BGP: BIRD per host announcing its pod block (full mesh or route reflector), pods on cali veths with /32 routes and the 169.254.1.1 proxy-ARP gateway"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []netmode.Placement {
	return []netmode.Placement{netmode.CrossHost, netmode.SameHost}
}

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_VETH", What: "veth pairs"}},
		Commands: []string{"ip", "bird", "birdc"},
	}
}

// Options are the mode's knobs, parsed from lab.Config.ModeOptions.
type Options struct {
	Reflector    bool // h1 reflects routes; the others peer only with it
	Timeout      time.Duration
	ControlPlane bool
}

// ParseOptions reads and validates the mode options.
func ParseOptions(c *lab.Config) (Options, error) {
	o := Options{Timeout: 30 * time.Second, ControlPlane: true}
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
	return o, nil
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

// BirdConfig is host h's BIRD configuration. The timers are those of
// Calico's bird.cfg template (connect delay 2 s, scan time 2 s).
func BirdConfig(l *lab.Lab, h *lab.Host, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# cnperf calico-bgp, host %s\n", h.Name)
	fmt.Fprintf(&b, "router id %s;\n", h.IP)
	b.WriteString("log stderr all;\n\n")
	b.WriteString("protocol device {\n\tscan time 2;\n}\n\n")
	b.WriteString("# this host's pod block: announced to peers, blackholed locally\n")
	b.WriteString("# (the pods' /32 routes are more specific)\n")
	fmt.Fprintf(&b, "protocol static pods {\n\tipv4;\n\troute %s blackhole;\n}\n\n", h.PodCIDR)
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

// lookPath finds programs; tests replace it to play a machine without BIRD.
var lookPath = exec.LookPath

var (
	phaseMu sync.Mutex
	phases  = map[*lab.Lab]map[string]time.Duration{}
)

// SetupPhases reports how long Setup spent converging BGP on lab l
// ("bgp_convergence"), for the startup workload.
func (Mode) SetupPhases(l *lab.Lab) map[string]time.Duration {
	phaseMu.Lock()
	defer phaseMu.Unlock()
	return phases[l]
}

func setPhase(l *lab.Lab, name string, d time.Duration) {
	phaseMu.Lock()
	defer phaseMu.Unlock()
	if phases[l] == nil {
		phases[l] = map[string]time.Duration{}
	}
	phases[l][name] = d
}

// Setup implements netmode.Mode: starts BIRD on every host and waits until
// every host's kernel has a route to every other host's pod block.
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	o, err := ParseOptions(&l.Cfg)
	if err != nil {
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
	if _, err := lookPath("bird"); err != nil {
		return errors.New("calico-bgp needs the bird command (BIRD 2); install it (apt-get install bird2)")
	}
	t0 := time.Now()
	procs := map[*lab.Host]*lab.Proc{}
	for _, h := range l.Hosts {
		if err := os.WriteFile(ConfigPath(l, h), []byte(BirdConfig(l, h, o)), 0o644); err != nil {
			return fmt.Errorf("writing bird config: %w", err)
		}
		p, err := l.Start(h.NetNS, "bird-"+h.Name, "bird", "-f", "-c", ConfigPath(l, h), "-s", SocketPath(l, h))
		if err != nil {
			return err
		}
		procs[h] = p
	}
	if err := waitConverged(ctx, l, procs, o.Timeout); err != nil {
		return err
	}
	setPhase(l, "bgp_convergence", time.Since(t0))
	netmode.MarkPhase(ctx, "bgp_convergence")
	return nil
}

// staticRoutes installs what BIRD would, without BIRD.
func staticRoutes(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		if err := l.IP(ctx, h.NetNS, "route", "add", "blackhole", h.PodCIDR.String()); err != nil {
			return err
		}
		for _, r := range l.Hosts {
			if r == h {
				continue
			}
			if !h.Underlay.Contains(r.IP) {
				return fmt.Errorf("calico-bgp without encapsulation needs the hosts on one subnet: %s and %s are not", h.Name, r.Name)
			}
			if err := l.IP(ctx, h.NetNS, "route", "add", r.PodCIDR.String(), "via", r.IP.String(), "dev", h.Dev); err != nil {
				return err
			}
		}
	}
	return nil
}

// Missing lists the pod blocks host h has no BGP route to yet, given the
// output of `ip -n H route show proto bird`.
func Missing(l *lab.Lab, h *lab.Host, routes string) []string {
	have := map[string]bool{}
	for _, line := range strings.Split(routes, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "via" {
			have[f[0]] = true
		}
	}
	var miss []string
	for _, r := range l.Hosts {
		if r != h && !have[r.PodCIDR.String()] {
			miss = append(miss, r.PodCIDR.String())
		}
	}
	return miss
}

func waitConverged(ctx context.Context, l *lab.Lab, procs map[*lab.Host]*lab.Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var waiting []string
		for _, h := range l.Hosts {
			select {
			case <-procs[h].Done():
				return fmt.Errorf("bird on %s exited: %s", h.Name, l.LogTail("bird-"+h.Name, 5))
			default:
			}
			// a read, not a change: not logged as a lab command
			out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", h.NetNS, "route", "show", "proto", "bird"})
			if err != nil {
				return err
			}
			if m := Missing(l, h, string(out)); len(m) > 0 {
				waiting = append(waiting, fmt.Sprintf("%s lacks %s", h.Name, strings.Join(m, ",")))
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			state, _ := l.Cfg.Exec.Run(ctx, []string{"birdc", "-s", SocketPath(l, l.Hosts[0]), "show", "protocols"})
			return fmt.Errorf("%w within %v (%s); bird on h1 says: %s; raise --mode-opt bgp-timeout",
				ErrNotConverged, timeout, strings.Join(waiting, "; "), strings.Join(strings.Fields(string(state)), " "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitAnnounced waits until every other host has a BGP route to h's block.
func waitAnnounced(ctx context.Context, l *lab.Lab, h *lab.Host, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, r := range l.Hosts {
		for r != h {
			out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", r.NetNS, "route", "show", "proto", "bird", h.PodCIDR.String()})
			if err != nil {
				return err
			}
			if strings.Contains(string(out), " via ") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%w: %s has no route to %s's block %s after %v", ErrNotConverged, r.Name, h.Name, h.PodCIDR, timeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
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
	if err := l.IP(ctx, h.NetNS, "route", "add", GatewayIP+"/32", "dev", h.Dev, "scope", "link"); err != nil {
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
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := AttachPod(ctx, l, h, name, l.Cfg.MTU)
	if err != nil {
		return nil, err
	}
	if o, err := ParseOptions(&l.Cfg); err == nil && o.ControlPlane {
		// the pod is reachable from elsewhere once every peer has its
		// host's block from BGP
		if err := waitAnnounced(ctx, l, h, o.Timeout); err != nil {
			return nil, err
		}
		netmode.MarkPhase(ctx, netmode.PhaseControlPlane)
	}
	return pod, nil
}

// AttachPod wires a pod the way Calico's CNI plugin and Felix do (see
// Mode.AddPod), with the given MTU; calico-ipip shares it.
func AttachPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string, mtuBytes int) (*lab.Pod, error) {
	pod, err := l.NewPodNS(ctx, h, name)
	if err != nil {
		return nil, err
	}
	ip, err := h.NextPodIP()
	if err != nil {
		return nil, err
	}
	netmode.MarkPhase(ctx, netmode.PhaseNamespace)
	pod.IP, pod.Dev = ip, "eth0"
	hv, mtu := HostVeth(name), fmt.Sprint(mtuBytes)
	if err := l.IP(ctx, h.NetNS, "link", "add", hv, "mtu", mtu, "type", "veth", "peer", "name", "eth0", "mtu", mtu, "netns", pod.NetNS); err != nil {
		return nil, fmt.Errorf("creating veth for pod %s: %w", name, err)
	}
	if err := l.Sysctl(ctx, h.NetNS, "net.ipv4.conf."+hv+".proxy_arp", "1"); err != nil {
		return nil, err
	}
	if err := l.Sysctl(ctx, h.NetNS, "net.ipv4.neigh."+hv+".proxy_delay", "0"); err != nil {
		return nil, err
	}
	steps := []struct {
		ns   string
		args []string
	}{
		{h.NetNS, []string{"link", "set", hv, "up"}},
		{h.NetNS, []string{"route", "add", netip.PrefixFrom(ip, 32).String(), "dev", hv, "scope", "link"}},
		{pod.NetNS, []string{"addr", "add", netip.PrefixFrom(ip, 32).String(), "dev", "eth0"}},
		{pod.NetNS, []string{"link", "set", "eth0", "up"}},
		{pod.NetNS, []string{"route", "add", "default", "via", GatewayIP, "dev", "eth0", "onlink"}},
	}
	for _, s := range steps {
		if err := l.IP(ctx, s.ns, s.args...); err != nil {
			return nil, fmt.Errorf("wiring pod %s: %w", name, err)
		}
	}
	netmode.MarkPhase(ctx, netmode.PhaseLinks)
	return pod, nil
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
