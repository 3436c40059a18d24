// Package ipvs is kube-proxy's IPVS mode: every cluster IP is bound to the
// dummy device kube-ipvs0 so the node accepts it, each service is an IPVS
// virtual server (round robin) with one real server per endpoint in
// masquerade (NAT) mode, and a hash:ip,port ipset KUBE-CLUSTER-IP lets a
// handful of iptables rules masquerade traffic from outside the cluster
// CIDR whatever the number of services. The virtual-server lookup is a hash,
// which is why the study found IPVS winning only with many services.
//
// It needs the kernel's IP_VS; where that is missing (as on cnperf's own
// CI kernel) Check reports it and the configuration is still tested as
// golden text.
package ipvs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/svc"
)

func init() { svc.Register(func() svc.LB { return &LB{} }) }

// Device is the dummy interface holding the cluster IPs.
const Device = "kube-ipvs0"

// Scheduler is kube-proxy's default IPVS scheduler.
const Scheduler = "rr"

// jumps lead from the built-in nat chains into kube-proxy's (chain, rule).
var jumps = [][2]string{
	{"PREROUTING", "-j KUBE-SERVICES"},
	{"OUTPUT", "-j KUBE-SERVICES"},
	{"POSTROUTING", "-j KUBE-POSTROUTING"},
}

// LB is the IPVS load balancer.
type LB struct {
	mu      sync.Mutex
	l       *lab.Lab
	dir     string
	vips    map[string]bool // addresses on kube-ipvs0
	touched bool
}

// Name implements svc.LB.
func (*LB) Name() string { return "ipvs" }

// Replicates implements result.Replicator: kube-proxy's ipvs mode, as a cluster
// running it records it.
func (*LB) Replicates() string { return "kube-proxy ipvs" }

// Summary implements svc.LB.
func (*LB) Summary() string {
	return "kube-proxy IPVS mode: virtual servers (rr, NAT) on kube-ipvs0, ipset KUBE-CLUSTER-IP for masquerade"
}

// Options implements svc.LB: it takes none.
func (*LB) Options() []option.Spec { return nil }

// Requires implements svc.LB.
func (*LB) Requires() svc.Requirements {
	return svc.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_IP_VS", What: "IP virtual server"},
			{Config: "CONFIG_IP_VS_PROTO_TCP", What: "IPVS TCP"},
			{Config: "CONFIG_IP_VS_PROTO_UDP", What: "IPVS UDP"},
			{Config: "CONFIG_IP_VS_RR", What: "IPVS round-robin scheduler"},
			{Config: "CONFIG_IP_SET_HASH_IPPORT", What: "ipset hash:ip,port"},
			{Config: "CONFIG_DUMMY", What: "dummy devices"},
		},
		Commands: []string{"ipvsadm", "ipvsadm-restore", "ipset", "iptables-restore", "conntrack"},
	}
}

// Config is what one Sync programs on a node, as text for each tool.
type Config struct {
	IPVS     string   // ipvsadm-restore input (after a clear)
	IPSet    string   // ipset restore input
	IPTables string   // iptables-restore --noflush input
	Addrs    []string // cluster IPs to bind on kube-ipvs0, "a.b.c.d/32"
}

func flag(proto string) string {
	if proto == "udp" {
		return "-u"
	}
	return "-t"
}

// Render builds a node's IPVS configuration for services.
func Render(services []svc.Service) Config {
	var v, set, ipt strings.Builder
	// ipvsadm-restore replays ipvsadm commands; -C clears first, which makes
	// the whole text declarative.
	v.WriteString("-C\n")
	set.WriteString("create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 262144 -exist\nflush KUBE-CLUSTER-IP\n")
	addrs := map[string]bool{}
	for _, s := range services {
		vs := s.Addr().String()
		addrs[s.VIP.String()+"/32"] = true
		fmt.Fprintf(&set, "add KUBE-CLUSTER-IP %s,%s:%d -exist\n", s.VIP, s.Proto, s.Port)
		if len(s.Endpoints) == 0 {
			continue // a virtual server with no real server rejects, as Kubernetes does
		}
		fmt.Fprintf(&v, "-A %s %s -s %s\n", flag(s.Proto), vs, Scheduler)
		for _, e := range s.Endpoints {
			fmt.Fprintf(&v, "-a %s %s -r %s -m -w 1\n", flag(s.Proto), vs, e)
		}
	}
	for _, s := range services {
		if len(s.Endpoints) == 0 {
			fmt.Fprintf(&v, "-A %s %s -s %s\n", flag(s.Proto), s.Addr(), Scheduler)
		}
	}
	ipt.WriteString("*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-POSTROUTING - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-NODE-PORT - [0:0]\n")
	ipt.WriteString("-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n")
	ipt.WriteString("-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000\n")
	ipt.WriteString("-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully\n")
	ipt.WriteString("-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000\n")
	fmt.Fprintf(&ipt, "-A KUBE-SERVICES -m comment --comment \"Kubernetes service cluster ip + port for masquerade purpose\" -m set --match-set KUBE-CLUSTER-IP dst,dst ! -s %s -j KUBE-MARK-MASQ\n", svc.ClusterCIDR)
	ipt.WriteString("-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT\n")
	ipt.WriteString("-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\n")
	ipt.WriteString("COMMIT\n")
	c := Config{IPVS: v.String(), IPSet: set.String(), IPTables: ipt.String()}
	for a := range addrs {
		c.Addrs = append(c.Addrs, a)
	}
	sort.Strings(c.Addrs)
	return c
}

// Text is the whole configuration as one golden text.
func (c Config) Text() string {
	var b strings.Builder
	b.WriteString("# ip link add " + Device + " type dummy\n")
	for _, a := range c.Addrs {
		b.WriteString("# ip addr add " + a + " dev " + Device + "\n")
	}
	b.WriteString("# ipvsadm-restore\n" + c.IPVS + "# ipset restore\n" + c.IPSet + "# iptables-restore --noflush\n" + c.IPTables)
	return b.String()
}

// Sync implements svc.LB. It refuses up front on a kernel without IP_VS,
// having changed nothing.
func (lb *LB) Sync(ctx context.Context, c *svc.Cluster, services []svc.Service) error {
	if err := svc.Validate(services); err != nil {
		return err
	}
	if err := svc.Check(lb); err != nil {
		return err
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.l, lb.dir = c.Lab, c.RulesDir()
	cfg := Render(services)
	files := map[string]string{"ipvs.rules": cfg.IPVS, "ipset.rules": cfg.IPSet, "ipvs-iptables.rules": cfg.IPTables}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(lb.dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	lb.touched = true
	want := map[string]bool{}
	for _, a := range cfg.Addrs {
		want[a] = true
	}
	for _, h := range c.Lab.Hosts {
		ns := h.NetNS
		if lb.vips == nil {
			if err := c.Lab.IP(ctx, ns, "link", "add", Device, "type", "dummy"); err != nil {
				return err
			}
			for _, kv := range [][2]string{{"net.ipv4.vs.conntrack", "1"}, {"net.ipv4.vs.expire_nodest_conn", "1"}} {
				if err := c.Lab.Sysctl(ctx, ns, kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		for a := range want {
			if !lb.vips[a] {
				if err := c.Lab.IP(ctx, ns, "addr", "add", a, "dev", Device); err != nil {
					return err
				}
			}
		}
		for a := range lb.vips {
			if !want[a] {
				if err := c.Lab.IP(ctx, ns, "addr", "del", a, "dev", Device); err != nil {
					return err
				}
			}
		}
		if _, err := c.Lab.In(ctx, ns, "ipset", "restore", "-file", filepath.Join(lb.dir, "ipset.rules")); err != nil {
			return err
		}
		if _, err := c.Lab.In(ctx, ns, "sh", "-c", "ipvsadm-restore < "+filepath.Join(lb.dir, "ipvs.rules")); err != nil {
			return err
		}
		if _, err := c.Lab.In(ctx, ns, "iptables-restore", "--noflush", filepath.Join(lb.dir, "ipvs-iptables.rules")); err != nil {
			return err
		}
		if lb.vips == nil {
			for _, j := range jumps {
				if _, err := c.Lab.In(ctx, ns, append([]string{"iptables", "-w", "-t", "nat", "-I", j[0], "1"}, strings.Fields(j[1])...)...); err != nil {
					return err
				}
			}
		}
	}
	lb.vips = want
	return nil
}

// Teardown implements svc.LB.
func (lb *LB) Teardown(ctx context.Context) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.l == nil || !lb.touched {
		return nil
	}
	var errs []error
	for _, h := range lb.l.Hosts {
		ns := h.NetNS
		for _, j := range jumps {
			_, _ = lb.l.In(ctx, ns, append([]string{"iptables", "-w", "-t", "nat", "-D", j[0]}, strings.Fields(j[1])...)...)
		}
		for _, ch := range []string{"KUBE-SERVICES", "KUBE-POSTROUTING", "KUBE-MARK-MASQ", "KUBE-NODE-PORT"} {
			_, _ = lb.l.In(ctx, ns, "iptables", "-w", "-t", "nat", "-F", ch)
			_, _ = lb.l.In(ctx, ns, "iptables", "-w", "-t", "nat", "-X", ch)
		}
		_, _ = lb.l.In(ctx, ns, "ipvsadm", "-C")
		_ = lb.l.IP(ctx, ns, "link", "del", Device)
		_, _ = lb.l.In(ctx, ns, "ipset", "destroy", "KUBE-CLUSTER-IP")
		if err := svc.FlushConntrack(ctx, lb.l, ns); err != nil {
			errs = append(errs, err)
		}
	}
	lb.vips, lb.touched = nil, false
	return errors.Join(errs...)
}
