// Package lab builds cnperf's local multi-host lab: emulated hosts are network
// namespaces joined by an underlay switch (a bridge in its own namespace), and
// pods are namespaces placed on hosts. Every name carries a per-run prefix so
// that two runs never collide and `cnperf clean` can find what a killed run
// left. Nothing in the host's own network namespace is ever touched: every
// command is `ip -n NS ...` or `ip netns exec NS ...` on a namespace the lab
// created.
package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// Prefix starts the name of every namespace, and state folder, cnperf makes.
const Prefix = "cnperf-"

// StateRoot holds one folder per run: sockets, logs, the owner's pid.
var StateRoot = "/run/cnperf"

// Config shapes a lab. Zero values take the defaults.
type Config struct {
	Hosts       int          // emulated hosts (default 2)
	MTU         int          // underlay MTU (default 1500)
	Underlay    netip.Prefix // underlay subnet (default 10.100.0.0/24)
	PodNet      netip.Prefix // cluster pod network; host N gets the Nth /24 (default 10.244.0.0/16)
	Name        string       // network mode being built, part of the names for readability
	Exec        Executor     // default OSExec
	ID          string       // run id (default random)
	SwitchName  string       // default "sw"
	HostPrefix  string       // hosts are named HostPrefix and their index (default "h": h1, h2, ...)
	NoStateDirs bool         // tests: do not create folders
	// ModeOptions are network-mode knobs (`cnperf run --mode-opt key=value`),
	// e.g. controlplane=off; each mode reads and validates its own keys.
	ModeOptions map[string]string
	// Routed puts every host on its own /24 behind a router namespace
	// instead of on one switched subnet: host N is .2 of the Nth /24 of the
	// /16 holding Underlay (10.100.N.0/24), its default route via the
	// router's .1. No two hosts are L2 neighbours. Also set by the mode
	// option underlay=routed.
	Routed bool
	// Commands, on this machine, runs every typed operation (package
	// iproute) as its command line (ip, bridge, sysctl) instead of through
	// netlink: slower, for comparing the two.
	Commands bool
	// Workers bounds how many hosts, pods or namespaces are built or
	// deleted at once (default: 1 when Exec only records, so that the
	// record reads in order; else 4 per CPU).
	Workers int
	// StaticNeighbours has the networks that can (the bridge-based ones:
	// package netmode/podnet) install each pod's neighbour entries, pod to
	// gateway and gateway to pod, as permanent entries instead of leaving
	// them to ARP. Every namespace of this machine shares one neighbour
	// table whose limit (net.ipv4.neigh.default.gc_thresh3, settable only
	// in the host's own namespace) a lab of several hundred talking pods
	// exceeds, where each real node would have a table of its own;
	// permanent entries are exempt from that limit.
	StaticNeighbours bool
	// PodBits is the prefix length of each host's pod subnet (default 24:
	// 253 pods a host; 23 holds 509, 22 holds 1021).
	PodBits int
}

// ModeOpt returns mode option key, or def when it is unset.
func (c *Config) ModeOpt(key, def string) string {
	if v, ok := c.ModeOptions[key]; ok {
		return v
	}
	return def
}

func (c *Config) setDefaults() {
	if c.Hosts == 0 {
		c.Hosts = 2
	}
	if c.MTU == 0 {
		c.MTU = 1500
	}
	if !c.Underlay.IsValid() {
		c.Underlay = netip.MustParsePrefix("10.100.0.0/24")
	}
	if !c.PodNet.IsValid() {
		c.PodNet = netip.MustParsePrefix("10.244.0.0/16")
	}
	if c.Exec == nil {
		c.Exec = OSExec{}
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	if c.SwitchName == "" {
		c.SwitchName = "sw"
	}
	if c.HostPrefix == "" {
		c.HostPrefix = "h"
	}
	if c.Workers == 0 {
		c.Workers = 1
		if _, real := c.Exec.(OSExec); real {
			c.Workers = 4 * runtime.NumCPU()
		}
	}
	if c.PodBits == 0 {
		c.PodBits = 24
	}
	if c.ModeOpt("underlay", "") == "routed" {
		c.Routed = true
	}
}

// routedSpace is the /16 the routed topology's per-host /24s come from. It
// cannot overlap a valid PodNet: a /16-or-shorter pod network that does not
// hold Underlay holds none of Underlay's /16.
func (c *Config) routedSpace() netip.Prefix {
	return netip.PrefixFrom(c.Underlay.Addr(), 16).Masked()
}

// Validate reports a configuration that cannot work, naming the fix.
func (c *Config) Validate() error {
	c.setDefaults()
	switch {
	case c.Hosts < 1 || c.Hosts > 200:
		return fmt.Errorf("lab: %d hosts; use 1 to 200", c.Hosts)
	case c.PodBits < 17 || c.PodBits > 24 || c.PodBits < c.PodNet.Bits()+1:
		return fmt.Errorf("lab: pod subnet /%d per host; use /%d to /24", c.PodBits, max(17, c.PodNet.Bits()+1))
	case c.Hosts >= 1<<(c.PodBits-c.PodNet.Bits()):
		return fmt.Errorf("lab: %d hosts do not fit %s in /%d pod subnets; use fewer hosts or smaller subnets", c.Hosts, c.PodNet, c.PodBits)
	case c.MTU < 576 || c.MTU > 65535:
		return fmt.Errorf("lab: MTU %d out of range; use 576 to 65535 (1500 is Ethernet's)", c.MTU)
	case !c.Underlay.Addr().Is4() || c.Underlay.Bits() > 24:
		return fmt.Errorf("lab: underlay %s; use an IPv4 prefix of /24 or shorter", c.Underlay)
	case !c.PodNet.Addr().Is4() || c.PodNet.Bits() > 16:
		return fmt.Errorf("lab: pod network %s; use an IPv4 prefix of /16 or shorter", c.PodNet)
	case c.Underlay.Overlaps(c.PodNet):
		return fmt.Errorf("lab: underlay %s overlaps pod network %s; pick disjoint ranges", c.Underlay, c.PodNet)
	case len(c.ID) > MaxIDLen:
		return fmt.Errorf("lab: run id %q is %d characters; use at most %d letters and digits (CNPERF_RUN_ID)", c.ID[:MaxIDLen]+"...", len(c.ID), MaxIDLen)
	case !validID(c.ID):
		// the id names folders that Teardown removes and is cut at the first
		// "-" by Clean: "..", "/" or "-" in it would reach past cnperf's own
		return fmt.Errorf("lab: run id %q; use letters and digits only (CNPERF_RUN_ID)", c.ID)
	case !validID(c.HostPrefix):
		return fmt.Errorf("lab: host prefix %q; use letters and digits only", c.HostPrefix)
	case c.ModeOpt("underlay", "switched") != "switched" && c.ModeOpt("underlay", "") != "routed":
		return fmt.Errorf("lab: underlay=%s; use underlay=switched or underlay=routed", c.ModeOpt("underlay", ""))
	}
	return nil
}

// MaxIDLen bounds a run id: it names namespaces and the folder holding
// the agents' sockets, whose paths the kernel limits to 108 bytes.
const MaxIDLen = 24

func validID(id string) bool {
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return id != ""
}

// NewID returns a short random run id.
//
// CNPERF_RUN_ID, when set, is used instead: scripts and tests can then
// name the namespaces a run will create before it starts.
func NewID() string {
	if id := os.Getenv("CNPERF_RUN_ID"); id != "" {
		return id
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Host is an emulated machine.
type Host struct {
	Index    int          // 1-based
	Name     string       // "h1"
	NetNS    string       // "cnperf-<id>-h1"
	Dev      string       // underlay device inside NetNS
	IP       netip.Addr   // underlay address
	Underlay netip.Prefix // the subnet IP is on
	Gateway  netip.Addr   // next hop off the subnet, when the underlay is routed
	PodCIDR  netip.Prefix // this host's pod subnet
	nextPod  int
	reserved map[string]netip.Addr
	podMax   netip.Addr // the last address the lab hands out, when the rest is lent (SplitPods)
	mu       sync.Mutex
}

// SplitPods lends the upper half of h's pod subnet to another allocator
// (a real CNI plugin's host-local IPAM, beside the lab's own pods) and
// returns it, first to last usable address; the lab's own addresses
// stay in the lower half. It fails when the lab already handed out one
// of the upper half.
func (h *Host) SplitPods() (first, last netip.Addr, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := 1 << (32 - h.PodCIDR.Bits())
	mid := h.PodCIDR.Addr()
	for i := 0; i < size/2; i++ {
		mid = mid.Next()
	}
	first, last = mid, lastAddr(h.PodCIDR).Prev()
	if h.podMax.IsValid() {
		return first, last, nil
	}
	if h.nextPod+2 >= size/2 {
		return first, last, fmt.Errorf("ipam: %s of %s already hands out %s and above; cannot lend it", h.PodCIDR, h.Name, first)
	}
	h.podMax = mid.Prev()
	return first, last, nil
}

// PodBitsFor is the longest per-host pod prefix holding n pods besides
// the gateway: /24 up to 253.
func PodBitsFor(n int) int {
	bits := 24
	for (1<<(32-bits))-3 < n && bits > 17 {
		bits--
	}
	return bits
}

// PodGateway is the first address of the host's pod subnet (the bridge's).
func (h *Host) PodGateway() netip.Addr { return h.PodCIDR.Addr().Next() }

// NextPodIP hands out the next free pod address on this host (.2, .3, ...).
func (h *Host) NextPodIP() (netip.Addr, error) { return h.PodIP("") }

// PodIP is the address of pod name: the one Reserve set aside for it, or
// else the next free one.
func (h *Host) PodIP(name string) (netip.Addr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.reserved[name]; ok && name != "" {
		delete(h.reserved, name)
		return a, nil
	}
	return h.nextLocked()
}

// Reserve sets the next free addresses aside for pods names, in order:
// pods built at once get the addresses they would have got one by one.
func (h *Host) Reserve(names ...string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reserved == nil {
		h.reserved = map[string]netip.Addr{}
	}
	for _, n := range names {
		a, err := h.nextLocked()
		if err != nil {
			return err
		}
		h.reserved[n] = a
	}
	return nil
}

func (h *Host) nextLocked() (netip.Addr, error) {
	a := h.PodGateway()
	for i := 0; i <= h.nextPod; i++ {
		a = a.Next()
	}
	if !h.PodCIDR.Contains(a) || a == lastAddr(h.PodCIDR) || (h.podMax.IsValid() && h.podMax.Less(a)) {
		return netip.Addr{}, fmt.Errorf("ipam: pod subnet %s of %s is full", h.PodCIDR, h.Name)
	}
	h.nextPod++
	return a, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := 32 - p.Bits()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= (1 << host) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Pod is a network namespace placed on a host (or the host's own, in host mode).
type Pod struct {
	Name  string
	NetNS string
	Host  *Host
	IP    netip.Addr // the address peers reach it at ("" for loopback-only)
	Dev   string     // its interface ("eth0"), empty when it has none
	Owned bool       // the lab created NetNS for this pod (false when sharing)
}

// Lab is one run's set of namespaces and processes.
type Lab struct {
	Cfg    Config
	ID     string
	Dir    string // state folder
	Switch string // underlay switch namespace
	Router string // the router namespace of a routed underlay ("" otherwise)
	Hosts  []*Host

	mu         sync.Mutex
	namespaces []string
	procs      []*Proc
	log        []string
	pods       map[string]*Pod
	cleanups   []func() error
	nl         *iproute.Netlink                     // nil: typed operations run as commands
	hops       map[string]map[netip.Addr]netip.Addr // PinPeers': pod namespace → peer → next hop
}

// OnTeardown registers fn to run at Teardown, newest first, after the
// processes stop and before the namespaces go: for what a mode holds in
// cnperf's own process (BPF links and maps) rather than in a namespace.
func (l *Lab) OnTeardown(fn func() error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cleanups = append(l.cleanups, fn)
}

// New plans a lab; Create builds it.
func New(cfg Config) (*Lab, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Lab{Cfg: cfg, ID: cfg.ID, pods: map[string]*Pod{}}
	if _, real := cfg.Exec.(OSExec); real && !cfg.Commands {
		l.nl = iproute.NewNetlink()
	}
	l.Dir = filepath.Join(StateRoot, cfg.ID)
	l.Switch = l.NSName(cfg.SwitchName)
	for i := 1; i <= cfg.Hosts; i++ {
		ip, err := nthAddr(cfg.Underlay, i)
		if err != nil {
			return nil, err
		}
		pod, err := nthSubnet(cfg.PodNet, cfg.PodBits, i)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("%s%d", cfg.HostPrefix, i)
		h := &Host{
			Index: i, Name: name, NetNS: l.NSName(name),
			Dev: "eth0", IP: ip, Underlay: cfg.Underlay, PodCIDR: pod,
		}
		if cfg.Routed {
			if h.Underlay, err = nthSubnet(cfg.routedSpace(), 24, i); err != nil {
				return nil, err
			}
			h.Gateway = h.Underlay.Addr().Next()
			h.IP = h.Gateway.Next()
		}
		l.Hosts = append(l.Hosts, h)
	}
	if cfg.Routed {
		l.Router = l.NSName("rt")
	}
	return l, nil
}

// NSName is the namespace name for a lab object.
func (l *Lab) NSName(obj string) string { return Prefix + l.ID + "-" + obj }

func nthAddr(p netip.Prefix, n int) (netip.Addr, error) {
	a := p.Masked().Addr()
	for i := 0; i < n; i++ {
		a = a.Next()
	}
	if !p.Contains(a) || a == lastAddr(p) {
		return netip.Addr{}, fmt.Errorf("lab: %s has no room for host %d", p, n)
	}
	return a, nil
}

func nthSubnet(p netip.Prefix, bits, n int) (netip.Prefix, error) {
	b := p.Masked().Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	if n >= 1<<(bits-p.Bits()) {
		return netip.Prefix{}, fmt.Errorf("lab: %s has no /%d for host %d", p, bits, n)
	}
	v += uint32(n) << (32 - bits)
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), bits), nil
}

// Run executes a command and logs it. Every mutation of the lab goes
// through here or through Apply.
func (l *Lab) Run(ctx context.Context, argv ...string) ([]byte, error) {
	l.logLine(strings.Join(argv, " "))
	return l.Cfg.Exec.Run(ctx, argv)
}

// Record adds line to the lab's record of what built it, for a change
// made other than by Run or Apply (a real CNI plugin the lab executed).
func (l *Lab) Record(line string) { l.logLine(line) }

func (l *Lab) logLine(line string) {
	l.mu.Lock()
	l.log = append(l.log, line)
	l.mu.Unlock()
}

// Native reports whether typed operations go through netlink (on this
// machine, unless Config.Commands) rather than to the executor as
// command lines.
func (l *Lab) Native() bool { return l.nl != nil }

// Apply makes ops in namespace ns, in order, each logged as its iproute2
// command line: through netlink on this machine, else (a Recorder,
// Config.Commands) by running that command line.
func (l *Lab) Apply(ctx context.Context, ns string, ops ...iproute.Op) error {
	for _, op := range ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		argv := op.Argv(ns)
		if l.nl == nil {
			if _, err := l.Run(ctx, argv...); err != nil {
				return err
			}
			continue
		}
		l.logLine(strings.Join(argv, " "))
		if err := l.nl.Apply(ns, op); err != nil {
			return err
		}
	}
	return nil
}

// WaitOperUp waits until device dev of namespace ns is operationally up,
// at most limit, as the CNI bridge plugin and Docker wait for a new
// pod's bridge port: a packet the pod sends before the port forwards is
// lost, and an ARP request lost so is retried only a second later. It
// is a read, not a change: nothing is recorded, and a lab that only
// records does not wait.
func (l *Lab) WaitOperUp(ctx context.Context, ns, dev string, limit time.Duration) error {
	if _, ok := l.Cfg.Exec.(*Recorder); ok {
		return nil
	}
	deadline := time.Now().Add(limit)
	for {
		var up bool
		if l.nl != nil {
			var err error
			if up, err = l.nl.OperUp(ns, dev); err != nil {
				return err
			}
		} else {
			out, err := l.Cfg.Exec.Run(ctx, []string{"ip", "-n", ns, "-o", "link", "show", "dev", dev})
			if err != nil {
				return err
			}
			up = strings.Contains(string(out), " state UP ")
		}
		if up {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s in %s not up after %v", dev, ns, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// IP runs `ip -n ns args...`: for what no typed operation covers (reads,
// and the networks' own rarities).
func (l *Lab) IP(ctx context.Context, ns string, args ...string) error {
	_, err := l.Run(ctx, append([]string{"ip", "-n", ns}, args...)...)
	return err
}

// In runs a command inside namespace ns (`ip netns exec ns argv...`).
func (l *Lab) In(ctx context.Context, ns string, argv ...string) ([]byte, error) {
	return l.Run(ctx, append([]string{"ip", "netns", "exec", ns}, argv...)...)
}

// Sysctl sets a per-namespace sysctl inside ns.
func (l *Lab) Sysctl(ctx context.Context, ns, key, val string) error {
	return l.Apply(ctx, ns, iproute.SysctlSet(key, val))
}

// Namespaces lists the namespaces the lab created so far, in order.
func (l *Lab) Namespaces() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.namespaces...)
}

// Commands returns every command run so far, in order.
func (l *Lab) Commands() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

// AddNS creates a namespace named for obj, with loopback up, and registers it
// for teardown before anything else can fail.
func (l *Lab) AddNS(ctx context.Context, obj string) (string, error) {
	ns := l.NSName(obj)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	add := []string{"ip", "netns", "add", ns}
	if l.nl == nil {
		if _, err := l.Run(ctx, add...); err != nil {
			return "", fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		l.register(ns)
		if err := l.IP(ctx, ns, "link", "set", "lo", "up"); err != nil {
			return "", err
		}
		return ns, nil
	}
	l.logLine(strings.Join(add, " "))
	l.logLine("ip -n " + ns + " link set lo up")
	made, err := l.nl.AddNS(ns)
	if made {
		l.register(ns)
	}
	if err != nil {
		return "", fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	return ns, nil
}

func (l *Lab) register(ns string) {
	l.mu.Lock()
	l.namespaces = append(l.namespaces, ns)
	l.mu.Unlock()
}

// Each runs fn for 0..n-1, at most Config.Workers at once, and returns the
// first error; once one failed, the calls not started yet are not made.
func (l *Lab) Each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return each(ctx, l.Cfg.Workers, n, fn)
}

func each(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if err := fn(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop {
					return
				}
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// Create builds the switch and the hosts: each host namespace gets eth0 on
// the underlay bridge, its address, the MTU and forwarding on. The hosts
// are built at once (Config.Workers).
func (l *Lab) Create(ctx context.Context) (err error) {
	if !l.Cfg.NoStateDirs {
		err := os.MkdirAll(l.Dir, 0o755)
		if err != nil && os.IsNotExist(err) { // another run's teardown removed the empty state root meanwhile
			err = os.MkdirAll(l.Dir, 0o755)
		}
		if err != nil {
			return fmt.Errorf("creating state folder: %w", err)
		}
		if err := os.WriteFile(filepath.Join(l.Dir, "owner"), []byte(ownerStamp(os.Getpid())), 0o644); err != nil {
			return err
		}
	}
	mtu := l.Cfg.MTU
	if _, err := l.AddNS(ctx, l.Cfg.SwitchName); err != nil {
		return err
	}
	// The switch stands for the physical network between hosts: no
	// netfilter on it. Where br_netfilter is loaded (Docker loads it) a new
	// namespace's bridges pass every frame through iptables, a cost on the
	// sender's CPU that no real switch adds. -e: nothing to turn off where
	// it is not loaded. Bridges inside hosts keep the kernel's default, as
	// kube-proxy needs.
	if err := l.Apply(ctx, l.Switch,
		iproute.Bridge{Name: "br0", MTU: mtu},
		iproute.Up("br0"),
		iproute.Sysctl{IgnoreMissing: true, Set: [][2]string{
			{"net.bridge.bridge-nf-call-iptables", "0"}, {"net.bridge.bridge-nf-call-ip6tables", "0"}, {"net.bridge.bridge-nf-call-arptables", "0"}}},
	); err != nil {
		return err
	}
	if l.Cfg.Routed {
		if _, err := l.AddNS(ctx, "rt"); err != nil {
			return err
		}
		if err := l.Sysctl(ctx, l.Router, "net.ipv4.ip_forward", "1"); err != nil {
			return err
		}
	}
	return l.Each(ctx, len(l.Hosts), func(ctx context.Context, i int) error {
		h := l.Hosts[i]
		if _, err := l.AddNS(ctx, h.Name); err != nil {
			return err
		}
		if l.Cfg.Routed {
			return l.linkToRouter(ctx, h, mtu)
		}
		return l.linkToSwitch(ctx, h, mtu)
	})
}

// linkToSwitch joins host h to the switched underlay. Equivalent to:
//
//	ip -n SW link add hN mtu MTU type veth peer name eth0 mtu MTU netns H
//	ip -n SW link set hN master br0 up
//	ip -n H addr add IP/BITS dev eth0 && ip -n H link set eth0 up
//	ip netns exec H sysctl -w net.ipv4.ip_forward=1
func (l *Lab) linkToSwitch(ctx context.Context, h *Host, mtu int) error {
	if err := l.Apply(ctx, l.Switch,
		iproute.Veth{Name: h.Name, MTU: mtu, Peer: h.Dev, PeerNS: h.NetNS},
		iproute.LinkSet{Name: h.Name, Master: "br0", Up: true},
	); err != nil {
		return err
	}
	return l.Apply(ctx, h.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(h.IP, h.Underlay.Bits()), Dev: h.Dev},
		iproute.Up(h.Dev),
		iproute.SysctlSet("net.ipv4.ip_forward", "1"),
	)
}

// AddHost joins one more host, named name, at address ip of the switched
// underlay, after Create: a machine that is not one of the numbered hosts
// (the local Kubernetes cluster's control plane). It has no pod subnet and
// is not in Hosts.
func (l *Lab) AddHost(ctx context.Context, name string, ip netip.Addr) (*Host, error) {
	switch {
	case l.Cfg.Routed:
		return nil, fmt.Errorf("lab: host %s: AddHost needs the switched underlay", name)
	case !l.Cfg.Underlay.Contains(ip) || ip == l.Cfg.Underlay.Masked().Addr() || ip == lastAddr(l.Cfg.Underlay):
		return nil, fmt.Errorf("lab: host %s at %s: not a host address of %s", name, ip, l.Cfg.Underlay)
	}
	for _, h := range l.Hosts {
		if h.IP == ip || h.Name == name {
			return nil, fmt.Errorf("lab: host %s at %s: %s has that name or address", name, ip, h.Name)
		}
	}
	h := &Host{Name: name, NetNS: l.NSName(name), Dev: "eth0", IP: ip, Underlay: l.Cfg.Underlay}
	if _, err := l.AddNS(ctx, name); err != nil {
		return nil, err
	}
	return h, l.linkToSwitch(ctx, h, l.Cfg.MTU)
}

// linkToRouter joins host h to the router of a routed underlay: a veth
// whose router end holds the host subnet's gateway. Equivalent to:
//
//	ip -n RT link add hN mtu MTU type veth peer name eth0 mtu MTU netns H
//	ip -n RT addr add GW/24 dev hN && ip -n RT link set hN up
//	ip -n H addr add IP/24 dev eth0 && ip -n H link set eth0 up
//	ip -n H route add default via GW
//	ip netns exec H sysctl -w net.ipv4.ip_forward=1
func (l *Lab) linkToRouter(ctx context.Context, h *Host, mtu int) error {
	bits := h.Underlay.Bits()
	if err := l.Apply(ctx, l.Router,
		iproute.Veth{Name: h.Name, MTU: mtu, Peer: h.Dev, PeerNS: h.NetNS},
		iproute.Addr{Prefix: netip.PrefixFrom(h.Gateway, bits), Dev: h.Name},
		iproute.Up(h.Name),
	); err != nil {
		return err
	}
	return l.Apply(ctx, h.NetNS,
		iproute.Addr{Prefix: netip.PrefixFrom(h.IP, bits), Dev: h.Dev},
		iproute.Up(h.Dev),
		iproute.Route{Via: h.Gateway},
		iproute.SysctlSet("net.ipv4.ip_forward", "1"),
	)
}

// HostPod returns a pod that shares h's own namespace (host networking).
func (l *Lab) HostPod(h *Host, name string) *Pod {
	return &Pod{Name: name, NetNS: h.NetNS, Host: h, IP: h.IP, Dev: h.Dev}
}

// NewPodNS creates a pod namespace on host h; the mode wires it.
func (l *Lab) NewPodNS(ctx context.Context, h *Host, name string) (*Pod, error) {
	ns, err := l.AddNS(ctx, h.Name+"-"+name)
	if err != nil {
		return nil, err
	}
	return &Pod{Name: name, NetNS: ns, Host: h, Owned: true}, nil
}

// DeleteNS deletes namespace ns, which the lab made, before Teardown
// (a start-up sample's pod, once timed), killing what runs inside.
func (l *Lab) DeleteNS(ctx context.Context, ns string) error {
	l.mu.Lock()
	i := slices.Index(l.namespaces, ns)
	if i >= 0 {
		l.namespaces = slices.Delete(l.namespaces, i, i+1)
	}
	l.mu.Unlock()
	if i < 0 {
		return fmt.Errorf("namespace %s is not the lab's", ns)
	}
	if errs := removeNamespaces(ctx, l.Cfg.Exec, l.nl, 1, []string{ns}); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Teardown kills the lab's processes and deletes its namespaces (which takes
// every link, route, rule and BPF program inside with them) and its state
// folder. It copes with a half-built lab and is harmless to call twice.
// The namespaces go at once (Config.Workers), after one look through
// /proc for processes still inside any of them.
func (l *Lab) Teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l.mu.Lock()
	procs, nss, cleanups := l.procs, l.namespaces, l.cleanups
	l.procs, l.namespaces, l.cleanups = nil, nil, nil
	l.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop() }()
	}
	wg.Wait()
	for i := len(cleanups) - 1; i >= 0; i-- {
		if err := cleanups[i](); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeNamespaces(ctx, l.Cfg.Exec, l.nl, l.Cfg.Workers, reversed(nss))...)
	if l.nl != nil {
		l.nl.Close()
	}
	if !l.Cfg.NoStateDirs {
		if err := os.RemoveAll(l.Dir); err != nil {
			errs = append(errs, err)
		}
		_ = os.Remove(filepath.Dir(l.Dir)) // the state root, once no run holds a folder in it
	}
	return errors.Join(errs...)
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// removeNamespaces kills whatever still runs inside nss, then deletes
// them, workers at once: through nl when it is set, else with `ip netns
// del` run by ex.
func removeNamespaces(ctx context.Context, ex Executor, nl *iproute.Netlink, workers int, nss []string) []error {
	if _, ok := ex.(*Recorder); !ok {
		killNSProcs(nss)
	}
	errs := make([]error, len(nss))
	_ = each(ctx, workers, len(nss), func(ctx context.Context, i int) error {
		errs[i] = removeNS(ctx, ex, nl, nss[i])
		return nil
	})
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// removeNS deletes namespace ns, whose processes are gone.
func removeNS(ctx context.Context, ex Executor, nl *iproute.Netlink, ns string) error {
	if nl != nil {
		if err := nl.DelNS(ns); err != nil {
			return fmt.Errorf("removing namespace %s: %w", ns, err)
		}
		return nil
	}
	if _, err := ex.Run(ctx, []string{"ip", "netns", "del", ns}); err != nil {
		if _, statErr := os.Stat(iproute.RunDir + "/" + ns); statErr != nil && os.IsNotExist(statErr) {
			return nil
		}
		return fmt.Errorf("removing namespace %s: %w", ns, err)
	}
	return nil
}

// Sysctls are set in every lab namespace (the lab's hosts and pods, and
// docker-lab's engines in them), as the studies tuned their hosts for many
// short connections.
var Sysctls = [][2]string{
	{"net.ipv4.ip_local_port_range", "1024 65000"},
	{"net.ipv4.tcp_tw_reuse", "1"},
}

// Preflight checks what every run on this machine needs, before anything is built.
func Preflight() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root to create network namespaces; run it as root (sudo cnperf run ...)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("needs the ip command; install it (apt-get install iproute2)")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return errors.New("this kernel has no network namespaces (CONFIG_NET_NS); cnperf's lab needs them")
	}
	return nil
}
