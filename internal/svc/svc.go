// Package svc is Kubernetes ClusterIP services in cnperf's lab: a virtual IP
// and port in front of backend pods spread over the hosts, and the load
// balancers that make the virtual IP reachable from client pods, each
// configured as its real implementation does (kube-proxy's iptables,
// nftables and IPVS modes, Cilium's socket and tc eBPF load balancing).
//
// A load balancer is declarative, as kube-proxy is: Sync(services) programs
// exactly that set of services, whatever was there before, and is safe to
// repeat; Teardown removes everything it ever programmed. Each lives in its
// own subpackage and registers by name from init().
package svc

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/registry"
)

// ServiceCIDR is Kubernetes' default service range (--service-cluster-ip-range).
var ServiceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// ClusterCIDR is the pod network kube-proxy is told about (--cluster-cidr):
// traffic to a service from outside it is masqueraded.
var ClusterCIDR = netip.MustParsePrefix("10.244.0.0/16")

// None is the --lb name of the reference: the client dials a backend pod's IP.
const None = "none"

// ClusterProxy is the --lb name of a cluster's own service proxy
// (kube-proxy in its mode, or whatever replaces it): the kubernetes
// backend's only one.
const ClusterProxy = "cluster"

// ErrNoEndpoints is returned by a dial to a service that has no endpoints;
// Kubernetes rejects such connections (ICMP port unreachable, or a refused
// connect with socket load balancing).
var ErrNoEndpoints = errors.New("service has no endpoints")

// Endpoint is one backend pod of a service.
type Endpoint struct {
	Pod  string // pod name, for comments and reports
	Host int    // index of the host (node) it runs on, 1-based
	IP   netip.Addr
	Port int
}

func (e Endpoint) String() string {
	return netip.AddrPortFrom(e.IP, uint16(e.Port)).String()
}

// Service is one port of a ClusterIP service. A Kubernetes Service with a
// TCP and a UDP port (DNS's 53, say) is two entries of the same name, one
// per protocol, as kube-proxy programs one set of rules per service port.
type Service struct {
	Namespace string // Kubernetes namespace, "default" if empty
	Name      string
	VIP       netip.Addr
	Port      int
	Proto     string // "tcp" or "udp"
	Endpoints []Endpoint
}

// PortName is kube-proxy's ServicePortName text: "ns/name:port".
func (s Service) PortName() string {
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + s.Name + ":" + s.Proto
}

// FullName is "ns/name".
func (s Service) FullName() string {
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + s.Name
}

// Addr is the service's virtual address and port.
func (s Service) Addr() netip.AddrPort { return netip.AddrPortFrom(s.VIP, uint16(s.Port)) }

// VIP returns the n-th service address of ServiceCIDR (n from 0), skipping
// the network address and .1 (the kubernetes API service).
func VIP(n int) (netip.Addr, error) {
	b := ServiceCIDR.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	size := uint32(1) << (32 - ServiceCIDR.Bits())
	if n < 0 || uint32(n)+3 >= size {
		return netip.Addr{}, fmt.Errorf("service %d does not fit in %s", n, ServiceCIDR)
	}
	v += uint32(n) + 10
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// Client is a pod whose traffic to services must be load-balanced, and the
// processes in it that will dial (socket load balancing acts per process).
type Client struct {
	Pod  *lab.Pod
	PIDs []int
}

// Cluster is where a load balancer programs: the lab's hosts are the nodes
// (kube-proxy's rules live in their namespaces), and the client pods.
type Cluster struct {
	Lab     *lab.Lab
	Clients []Client
	// Dir receives rule files (iptables-restore, nft -f); default Lab.Dir.
	Dir string
}

// RulesDir is where rule files go.
func (c *Cluster) RulesDir() string {
	if c.Dir != "" {
		return c.Dir
	}
	return c.Lab.Dir
}

// Requirements is what a load balancer needs from the machine.
type Requirements = netmode.Requirements

// LB is one ClusterIP load balancer.
type LB interface {
	Name() string
	Summary() string
	Requires() Requirements
	// Options declares the options the load balancer takes; nil when none.
	Options() []option.Spec
	// Sync makes the programmed services exactly services: new ones added,
	// changed ones updated, missing ones removed. Safe to repeat.
	Sync(ctx context.Context, c *Cluster, services []Service) error
	// Teardown removes every rule, program, map, cgroup and conntrack entry
	// this load balancer made. It copes with a half-done Sync and is
	// harmless to call twice.
	Teardown(ctx context.Context) error
}

// Factory makes a fresh load balancer (they hold state: chains, links).
type Factory func() LB

var reg = registry.New[Factory]("load balancer", "use one of them, or none for the pod IP directly")

// Register adds a load balancer; a duplicate name panics (a programming error).
func Register(f Factory) { reg.Register(f().Name(), f) }

// New makes the named load balancer, or says which exist.
func New(name string) (LB, error) {
	f, err := reg.Get(name)
	if err != nil {
		return nil, err
	}
	return f(), nil
}

// Names lists the registered load balancers, sorted.
func Names() []string { return reg.Names() }

// ValidateOptions checks a set of options against what lb declares: an
// unknown key or a malformed value is an error that lists lb's options.
func ValidateOptions(lb LB, set map[string]string) error {
	return option.Validate("load balancer "+lb.Name(), lb.Options(), set)
}

// ErrUnsupported marks a load balancer this machine cannot run; the error
// text names what is missing.
var ErrUnsupported = errors.New("unsupported here")

type unsupported struct{ msg string }

func (e unsupported) Error() string        { return e.msg }
func (e unsupported) Is(target error) bool { return target == ErrUnsupported }

// Unsupported is an error that says what this machine lacks and is
// ErrUnsupported for errors.Is.
func Unsupported(format string, a ...any) error {
	return unsupported{fmt.Sprintf(format, a...)}
}

// Check reports the first missing requirement of lb on this machine, with
// the fix, wrapping ErrUnsupported.
func Check(lb LB) error {
	return CheckWith(lb, netmode.RunningKernel(), exec.LookPath)
}

// CheckWith is Check against a given kernel config and PATH lookup.
func CheckWith(lb LB, k netmode.KernelConfig, lookPath func(string) (string, error)) error {
	req := lb.Requires()
	for _, f := range req.Kernel {
		if !k.Has(f.Config) {
			return Unsupported("load balancer %s needs %s (%s); this kernel lacks it", lb.Name(), f.Config, f.What)
		}
	}
	for _, c := range req.Commands {
		if _, err := lookPath(c); err != nil {
			return Unsupported("load balancer %s needs the %q command; install it (apt-get install %s)", lb.Name(), c, debianPackage(c))
		}
	}
	return nil
}

func debianPackage(cmd string) string {
	switch cmd {
	case "iptables", "iptables-restore", "iptables-save":
		return "iptables"
	case "nft":
		return "nftables"
	case "ipvsadm":
		return "ipvsadm"
	case "conntrack":
		return "conntrack"
	case "tc":
		return "iproute2"
	}
	return cmd
}

// Validate checks a set of services before anything is programmed: names,
// addresses in ServiceCIDR, ports, protocols, and no two services on the
// same address, port and protocol (a port clash).
func Validate(services []Service) error {
	type key struct {
		ip    netip.Addr
		port  int
		proto string
	}
	seen := map[key]string{}
	names := map[string]bool{}
	for _, s := range services {
		switch {
		case s.Name == "":
			return errors.New("a service has no name")
		case names[s.PortName()]:
			return fmt.Errorf("service %s (%s) defined twice", s.FullName(), s.Proto)
		case !ServiceCIDR.Contains(s.VIP):
			return fmt.Errorf("service %s: address %s is outside the service range %s", s.FullName(), s.VIP, ServiceCIDR)
		case s.Port < 1 || s.Port > 65535:
			return fmt.Errorf("service %s: port %d out of range; use 1 to 65535", s.FullName(), s.Port)
		case s.Proto != "tcp" && s.Proto != "udp":
			return fmt.Errorf("service %s: protocol %q; use tcp or udp", s.FullName(), s.Proto)
		}
		names[s.PortName()] = true
		k := key{s.VIP, s.Port, s.Proto}
		if other, dup := seen[k]; dup {
			return fmt.Errorf("port clash: services %s and %s both use %s/%s; give each its own address or port", other, s.FullName(), s.Addr(), s.Proto)
		}
		seen[k] = s.FullName()
		for _, e := range s.Endpoints {
			if !e.IP.Is4() || e.Port < 1 || e.Port > 65535 {
				return fmt.Errorf("service %s: bad endpoint %s", s.FullName(), e)
			}
		}
	}
	return nil
}

// FlushConntrack deletes the conntrack entries of connections to the
// service range in namespace ns, as kube-proxy does for stale services.
// Deleting nothing is not an error.
func FlushConntrack(ctx context.Context, l *lab.Lab, ns string) error {
	_, err := l.In(ctx, ns, "conntrack", "-D", "--orig-dst", ServiceCIDR.Addr().String(), "--mask-dst", maskOf(ServiceCIDR))
	if err != nil && strings.Contains(err.Error(), "0 flow entries") {
		return nil
	}
	return err
}

func maskOf(p netip.Prefix) string {
	m := ^uint32(0) << (32 - p.Bits())
	return fmt.Sprintf("%d.%d.%d.%d", byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
}

// PrepareNodes gives every node a route to the service range out of its
// underlay device, as a real node's default route does: without one, a
// packet to a cluster IP with no rule dies in routing before netfilter can
// reject it as Kubernetes does for a service without endpoints. Equivalent
// to, on each node:
//
//	ip -n NODE route add 10.96.0.0/12 dev eth0
func PrepareNodes(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		if err := l.Apply(ctx, h.NetNS, iproute.Route{Dst: ServiceCIDR, Dev: h.Dev}); err != nil {
			return fmt.Errorf("service route on %s: %w", h.Name, err)
		}
	}
	return nil
}
