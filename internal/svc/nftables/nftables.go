// Package nftables is kube-proxy's nftables mode: in every node's namespace,
// table ip kube-proxy dispatches a packet with one verdict-map lookup keyed
// by ip daddr . meta l4proto . th dport (map service-ips) to the service's
// chain, which picks an endpoint chain with `numgen random mod N vmap`, and
// the endpoint chain DNATs. Services without endpoints are in
// no-endpoint-services and rejected. Unlike iptables' linear KUBE-SERVICES,
// the lookup cost does not grow with the number of services. Each Sync is
// one `nft -f` transaction that re-declares and flushes the table's objects
// and deletes stale chains, as kube-proxy's full sync does.
package nftables

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

// Table is kube-proxy's table name (family ip).
const Table = "kube-proxy"

// LB is the nftables load balancer.
type LB struct {
	mu      sync.Mutex
	l       *lab.Lab
	dir     string
	chains  map[string]bool // per-service and per-endpoint chains programmed
	touched bool
}

// Name implements svc.LB.
func (*LB) Name() string { return "nftables" }

// Replicates implements result.Replicator: kube-proxy's nftables mode, as a cluster
// running it records it.
func (*LB) Replicates() string { return "kube-proxy nftables" }

// Summary implements svc.LB.
func (*LB) Summary() string {
	return "kube-proxy nftables mode: verdict map keyed by ip . proto . port, numgen random endpoint choice"
}

// Options implements svc.LB: it takes none.
func (*LB) Options() []option.Spec { return nil }

// Requires implements svc.LB.
func (*LB) Requires() svc.Requirements {
	return svc.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_NF_TABLES", What: "nftables"},
			{Config: "CONFIG_NFT_NAT", What: "nftables NAT"},
			{Config: "CONFIG_NFT_NUMGEN", What: "nftables numgen"},
			{Config: "CONFIG_NFT_REJECT", What: "nftables reject"},
		},
		Commands: []string{"nft", "conntrack"},
	}
}

func hash8(s string) string {
	h := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(h[:])[:8]
}

// ServiceChain is kube-proxy's per-service chain name.
func ServiceChain(s svc.Service) string {
	base := fmt.Sprintf("%s/%s/%s/p%d", ns(s), s.Name, s.Proto, s.Port)
	return "service-" + hash8(base) + "-" + base
}

// EndpointChain is kube-proxy's per-endpoint chain name.
func EndpointChain(s svc.Service, e svc.Endpoint) string {
	base := fmt.Sprintf("%s/%s/%s/p%d__%s/%d", ns(s), s.Name, s.Proto, s.Port, e.IP, e.Port)
	return "endpoint-" + hash8(base) + "-" + base
}

func ns(s svc.Service) string {
	if s.Namespace == "" {
		return "default"
	}
	return s.Namespace
}

// Rules renders the `nft -f` transaction that makes the programmed set
// exactly services; stale holds the chains of the previous Sync. It
// returns the text and the chains it programs.
func Rules(services []svc.Service, stale map[string]bool) (string, map[string]bool) {
	var b strings.Builder
	t := "ip " + Table
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("add table %s { comment \"rules for kube-proxy\" ; }", t)
	base := []struct{ name, spec, rule string }{
		{"nat-prerouting", "type nat hook prerouting priority -100 ;", "jump services"},
		{"nat-output", "type nat hook output priority -100 ;", "jump services"},
		{"nat-postrouting", "type nat hook postrouting priority 100 ;", "jump masquerading"},
		{"filter-input", "type filter hook input priority -110 ;", "ct state new jump service-endpoints-check"},
		{"filter-forward", "type filter hook forward priority -110 ;", "ct state new jump service-endpoints-check"},
		{"filter-output", "type filter hook output priority -110 ;", "ct state new jump service-endpoints-check"},
		{"mark-for-masquerade", "", "mark set mark or 0x4000"},
		{"masquerading", "", "mark and 0x4000 == 0 return\nmark set mark xor 0x4000\nmasquerade fully-random"},
		{"services", "", "ip daddr . meta l4proto . th dport vmap @service-ips\nfib daddr type local ip daddr != 127.0.0.0/8 jump nodeports"},
		{"nodeports", "", ""},
		{"service-endpoints-check", "", "ip daddr . meta l4proto . th dport vmap @no-endpoint-services"},
		{"reject-chain", "", "reject"},
	}
	// Objects first (add is idempotent), then flush them, then fill them.
	for _, c := range base {
		if c.spec != "" {
			p("add chain %s %s { %s }", t, c.name, c.spec)
		} else {
			p("add chain %s %s", t, c.name)
		}
	}
	for _, m := range []string{"service-ips", "no-endpoint-services"} {
		p("add map %s %s { type ipv4_addr . inet_proto . inet_service : verdict ; comment \"ClusterIP dispatch\" ; }", t, m)
		p("flush map %s %s", t, m)
	}
	for _, c := range base {
		p("flush chain %s %s", t, c.name)
		for _, r := range strings.Split(c.rule, "\n") {
			if r != "" {
				p("add rule %s %s %s", t, c.name, r)
			}
		}
	}
	chains := map[string]bool{}
	for _, s := range services {
		key := fmt.Sprintf("%s . %s . %d", s.VIP, s.Proto, s.Port)
		if len(s.Endpoints) == 0 {
			p("add element %s no-endpoint-services { %s comment \"%s\" : goto reject-chain }", t, key, s.PortName())
			continue
		}
		sc := ServiceChain(s)
		chains[sc] = true
		p("add chain %s %s", t, sc)
		p("flush chain %s %s", t, sc)
		p("add rule %s %s ip daddr %s %s dport %d ip saddr != %s jump mark-for-masquerade", t, sc, s.VIP, s.Proto, s.Port, svc.ClusterCIDR)
		var vm []string
		for i, e := range s.Endpoints {
			ec := EndpointChain(s, e)
			chains[ec] = true
			p("add chain %s %s", t, ec)
			p("flush chain %s %s", t, ec)
			p("add rule %s %s ip saddr %s jump mark-for-masquerade", t, ec, e.IP)
			p("add rule %s %s meta l4proto %s dnat to %s", t, ec, s.Proto, e)
			vm = append(vm, fmt.Sprintf("%d : goto %s", i, ec))
		}
		p("add rule %s %s numgen random mod %d vmap { %s }", t, sc, len(s.Endpoints), strings.Join(vm, " , "))
		p("add element %s service-ips { %s comment \"%s\" : goto %s }", t, key, s.PortName(), sc)
	}
	var gone []string
	for c := range stale {
		if !chains[c] {
			gone = append(gone, c)
		}
	}
	sort.Strings(gone)
	for _, c := range gone { // flush all before deleting any: they reference each other
		p("flush chain %s %s", t, c)
	}
	for _, c := range gone {
		p("delete chain %s %s", t, c)
	}
	return b.String(), chains
}

// TeardownRules deletes the table, whether or not it exists.
func TeardownRules() string {
	return fmt.Sprintf("add table ip %s\ndelete table ip %s\n", Table, Table)
}

// Sync implements svc.LB: one nft transaction per node, nodes in parallel.
func (lb *LB) Sync(ctx context.Context, c *svc.Cluster, services []svc.Service) error {
	if err := svc.Validate(services); err != nil {
		return err
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.l, lb.dir = c.Lab, c.RulesDir()
	text, chains := Rules(services, lb.chains)
	path := filepath.Join(lb.dir, "nftables.nft")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing nftables rules: %w", err)
	}
	lb.touched = true
	errs := make([]error, len(c.Lab.Hosts))
	var wg sync.WaitGroup
	for i, h := range c.Lab.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Lab.In(ctx, h.NetNS, "nft", "-f", path); err != nil {
				errs[i] = fmt.Errorf("programming nftables on %s: %w", h.Name, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // a failed transaction changed nothing on that node
		}
	}
	lb.chains = chains
	return nil
}

// Teardown implements svc.LB: delete the table, flush the services'
// conntrack entries.
func (lb *LB) Teardown(ctx context.Context) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.l == nil || !lb.touched {
		return nil
	}
	path := filepath.Join(lb.dir, "nftables-teardown.nft")
	if err := os.WriteFile(path, []byte(TeardownRules()), 0o644); err != nil {
		return fmt.Errorf("writing nftables teardown: %w", err)
	}
	var errs []string
	for _, h := range lb.l.Hosts {
		if _, err := lb.l.In(ctx, h.NetNS, "nft", "-f", path); err != nil {
			errs = append(errs, err.Error())
		}
		if err := svc.FlushConntrack(ctx, lb.l, h.NetNS); err != nil {
			errs = append(errs, err.Error())
		}
	}
	lb.chains, lb.touched = nil, false
	if len(errs) > 0 {
		return fmt.Errorf("nftables teardown: %s", strings.Join(errs, "; "))
	}
	return nil
}
