// Package iptables is kube-proxy's iptables mode: in every node's namespace,
// nat KUBE-SERVICES matches a service's cluster IP and port and jumps to its
// KUBE-SVC-* chain, which picks one KUBE-SEP-* endpoint chain with
// `statistic --mode random --probability 1/(n-i)` and DNATs to the pod;
// KUBE-MARK-MASQ marks what KUBE-POSTROUTING must masquerade (traffic from
// outside the cluster CIDR, and a pod reaching itself through its service);
// services without endpoints are REJECTed in filter KUBE-SERVICES. As
// kube-proxy does, each Sync writes the whole ruleset in one
// iptables-restore --noflush call (flushing its chains by declaring them and
// deleting stale ones), which keeps 10,000 services to seconds.
package iptables

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
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

// The fixed chains, as kube-proxy names them.
const (
	chainServices     = "KUBE-SERVICES"
	chainNodePorts    = "KUBE-NODEPORTS"
	chainPostrouting  = "KUBE-POSTROUTING"
	chainMarkMasq     = "KUBE-MARK-MASQ"
	masqMark          = "0x4000"
	largeClusterLimit = 1000 // kube-proxy drops per-endpoint comments above this many endpoints
)

// The legacy (x_tables) backend: iptables-nft takes over ten minutes here
// to restore 10,000 services (it rebuilds its cache per chain), legacy a few
// seconds; and x_tables' linear rule walk is the cost the study measured.
// Debian's iptables package ships both.
const (
	iptablesCmd = "iptables-legacy"
	restoreCmd  = "iptables-legacy-restore"
)

// jump is a rule in a built-in chain that leads into kube-proxy's chains.
type jump struct {
	table, chain string
	rule         []string
}

var jumps = []jump{
	{"filter", "INPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"filter", "FORWARD", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"filter", "OUTPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"nat", "PREROUTING", []string{"-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"nat", "OUTPUT", []string{"-m", "comment", "--comment", "kubernetes service portals", "-j", chainServices}},
	{"nat", "POSTROUTING", []string{"-m", "comment", "--comment", "kubernetes postrouting rules", "-j", chainPostrouting}},
}

// LB is the iptables load balancer. Its state is what it programmed, so
// that the next Sync removes what is gone and Teardown removes everything.
type LB struct {
	mu      sync.Mutex
	l       *lab.Lab
	dir     string
	nodes   []string        // namespaces where jumps are installed
	chains  map[string]bool // KUBE-SVC-*/KUBE-SEP-* chains in the nat table now
	touched bool            // a restore may have created the fixed chains
}

// Name implements svc.LB.
func (*LB) Name() string { return "iptables" }

// Replicates implements result.Replicator: kube-proxy's iptables mode, as a cluster
// running it records it.
func (*LB) Replicates() string { return "kube-proxy iptables" }

// Summary implements svc.LB.
func (*LB) Summary() string {
	return "kube-proxy iptables mode: KUBE-SERVICES -> KUBE-SVC-* -> KUBE-SEP-* with statistic random DNAT"
}

// Options implements svc.LB: it takes none.
func (*LB) Options() []option.Spec { return nil }

// Requires implements svc.LB.
func (*LB) Requires() svc.Requirements {
	return svc.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_IP_NF_IPTABLES", What: "iptables (x_tables)"},
			{Config: "CONFIG_IP_NF_NAT", What: "iptables nat table"},
			{Config: "CONFIG_IP_NF_FILTER", What: "iptables filter table"},
			{Config: "CONFIG_NETFILTER_XT_MATCH_STATISTIC", What: "iptables statistic match"},
			{Config: "CONFIG_NETFILTER_XT_MATCH_COMMENT", What: "iptables comment match"},
		},
		Commands: []string{iptablesCmd, restoreCmd, "conntrack"},
	}
}

// ChainName is kube-proxy's hashed chain name: prefix + the first 16
// characters of base32(sha256(parts)).
func ChainName(prefix string, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "")))
	return prefix + base32.StdEncoding.EncodeToString(h[:])[:16]
}

func svcChain(s svc.Service) string { return ChainName("KUBE-SVC-", s.PortName(), s.Proto) }

func sepChain(s svc.Service, e svc.Endpoint) string {
	return ChainName("KUBE-SEP-", s.PortName(), s.Proto, e.String())
}

// Rules renders the iptables-restore input that makes the programmed set
// exactly services; stale lists chains of an earlier Sync to delete. It
// returns the text and the KUBE-SVC/KUBE-SEP chains it declares.
func Rules(services []svc.Service, stale map[string]bool) (string, map[string]bool) {
	var b strings.Builder
	endpoints := 0
	for _, s := range services {
		endpoints += len(s.Endpoints)
	}
	large := endpoints > largeClusterLimit

	// filter: services with no endpoints are rejected, as Kubernetes does.
	b.WriteString("*filter\n:" + chainServices + " - [0:0]\n")
	for _, s := range services {
		if len(s.Endpoints) == 0 {
			fmt.Fprintf(&b, "-A %s -m comment --comment \"%s has no endpoints\" -m %s -p %s -d %s/32 --dport %d -j REJECT\n",
				chainServices, s.PortName(), s.Proto, s.Proto, s.VIP, s.Port)
		}
	}
	b.WriteString("COMMIT\n")

	b.WriteString("*nat\n")
	for _, c := range []string{chainServices, chainNodePorts, chainPostrouting, chainMarkMasq} {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	chains := map[string]bool{}
	var rules strings.Builder
	for _, s := range services {
		if len(s.Endpoints) == 0 {
			continue
		}
		sc := svcChain(s)
		chains[sc] = true
		fmt.Fprintf(&b, ":%s - [0:0]\n", sc)
		match := fmt.Sprintf("-m %s -p %s -d %s/32 --dport %d", s.Proto, s.Proto, s.VIP, s.Port)
		fmt.Fprintf(&rules, "-A %s -m comment --comment \"%s cluster IP\" %s -j %s\n", chainServices, s.PortName(), match, sc)
		fmt.Fprintf(&rules, "-A %s -m comment --comment \"%s cluster IP\" %s ! -s %s -j %s\n", sc, s.PortName(), match, svc.ClusterCIDR, chainMarkMasq)
		n := len(s.Endpoints)
		for i, e := range s.Endpoints {
			ep := sepChain(s, e)
			chains[ep] = true
			fmt.Fprintf(&b, ":%s - [0:0]\n", ep)
			comment := ""
			if !large {
				comment = fmt.Sprintf("-m comment --comment \"%s -> %s\" ", s.PortName(), e)
			}
			if i < n-1 {
				fmt.Fprintf(&rules, "-A %s %s-m statistic --mode random --probability %0.10f -j %s\n", sc, comment, 1.0/float64(n-i), ep)
			} else {
				fmt.Fprintf(&rules, "-A %s %s-j %s\n", sc, comment, ep)
			}
			comment = ""
			if !large {
				comment = fmt.Sprintf("-m comment --comment %s ", s.PortName())
			}
			fmt.Fprintf(&rules, "-A %s %s-s %s/32 -j %s\n", ep, comment, e.IP, chainMarkMasq)
			fmt.Fprintf(&rules, "-A %s %s-m %s -p %s -j DNAT --to-destination %s\n", ep, comment, s.Proto, s.Proto, e)
		}
	}
	// Stale chains are declared (which flushes them) before any -X.
	var gone []string
	for c := range stale {
		if !chains[c] {
			gone = append(gone, c)
		}
	}
	sort.Strings(gone)
	for _, c := range gone {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	fmt.Fprintf(&b, "-A %s -m mark ! --mark %s/%s -j RETURN\n", chainPostrouting, masqMark, masqMark)
	fmt.Fprintf(&b, "-A %s -j MARK --xor-mark %s\n", chainPostrouting, masqMark)
	fmt.Fprintf(&b, "-A %s -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully\n", chainPostrouting)
	fmt.Fprintf(&b, "-A %s -j MARK --or-mark %s\n", chainMarkMasq, masqMark)
	b.WriteString(rules.String())
	fmt.Fprintf(&b, "-A %s -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this chain\" -m addrtype --dst-type LOCAL -j %s\n", chainServices, chainNodePorts)
	for _, c := range gone {
		fmt.Fprintf(&b, "-X %s\n", c)
	}
	b.WriteString("COMMIT\n")
	return b.String(), chains
}

// TeardownRules renders the iptables-restore input that deletes every chain
// of chains and the fixed ones (the jumps into them must be gone first).
func TeardownRules(chains map[string]bool) string {
	var names []string
	for c := range chains {
		names = append(names, c)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("*filter\n:" + chainServices + " - [0:0]\n-X " + chainServices + "\nCOMMIT\n*nat\n")
	all := append([]string{chainServices, chainNodePorts, chainPostrouting, chainMarkMasq}, names...)
	for _, c := range all {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, c := range all {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// Sync implements svc.LB: one iptables-restore per node, nodes in parallel
// (each node's kube-proxy works on its own).
func (lb *LB) Sync(ctx context.Context, c *svc.Cluster, services []svc.Service) error {
	if err := svc.Validate(services); err != nil {
		return err
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.l, lb.dir = c.Lab, c.RulesDir()
	text, chains := Rules(services, lb.chains)
	path := filepath.Join(lb.dir, "iptables.rules")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing iptables rules: %w", err)
	}
	lb.touched = true
	err := eachNode(c.Lab, func(h *lab.Host) error {
		if _, err := c.Lab.In(ctx, h.NetNS, restoreCmd, "--noflush", path); err != nil {
			return fmt.Errorf("programming iptables on %s: %w", h.Name, err)
		}
		return nil
	})
	if err != nil {
		// What is in the kernel is unknown now: remember the union, so
		// Teardown removes both.
		for k := range chains {
			if lb.chains == nil {
				lb.chains = map[string]bool{}
			}
			lb.chains[k] = true
		}
		return err
	}
	lb.chains = chains
	if len(lb.nodes) == 0 {
		for _, h := range c.Lab.Hosts {
			lb.nodes = append(lb.nodes, h.NetNS)
			for _, j := range jumps {
				args := append([]string{iptablesCmd, "-w", "-t", j.table, "-I", j.chain, "1"}, j.rule...)
				if _, err := c.Lab.In(ctx, h.NetNS, args...); err != nil {
					return fmt.Errorf("installing the %s %s jump on %s: %w", j.table, j.chain, h.Name, err)
				}
			}
		}
	}
	return nil
}

func eachNode(l *lab.Lab, f func(h *lab.Host) error) error {
	errs := make([]error, len(l.Hosts))
	var wg sync.WaitGroup
	for i, h := range l.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(h)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Teardown implements svc.LB: the jumps, then every chain, then the
// conntrack entries of connections to services.
func (lb *LB) Teardown(ctx context.Context) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.l == nil || !lb.touched {
		return nil
	}
	var errs []string
	for _, ns := range lb.nodes {
		for _, j := range jumps {
			args := append([]string{iptablesCmd, "-w", "-t", j.table, "-D", j.chain}, j.rule...)
			if _, err := lb.l.In(ctx, ns, args...); err != nil && !notThere(err) {
				errs = append(errs, err.Error())
			}
		}
	}
	path := filepath.Join(lb.dir, "iptables-teardown.rules")
	if err := os.WriteFile(path, []byte(TeardownRules(lb.chains)), 0o644); err != nil {
		return fmt.Errorf("writing iptables teardown: %w", err)
	}
	for _, h := range lb.l.Hosts {
		if _, err := lb.l.In(ctx, h.NetNS, restoreCmd, "--noflush", path); err != nil {
			errs = append(errs, err.Error())
		}
		if err := svc.FlushConntrack(ctx, lb.l, h.NetNS); err != nil {
			errs = append(errs, err.Error())
		}
	}
	lb.nodes, lb.chains, lb.touched = nil, nil, false
	if len(errs) > 0 {
		return fmt.Errorf("iptables teardown: %s", strings.Join(errs, "; "))
	}
	return nil
}

// notThere reports an iptables error about a rule or chain that does not
// exist (a half-done Sync never installed it).
func notThere(err error) bool {
	m := err.Error()
	return strings.Contains(m, "does a matching rule exist") || strings.Contains(m, "No chain") || strings.Contains(m, "doesn't exist")
}
