package lab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// NeighbourLimit is the kernel's neighbour (ARP) table limit,
// net.ipv4.neigh.default.gc_thresh3, shared by every namespace of this
// machine; 0 when it cannot be read.
func NeighbourLimit() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// PinPeers readies pods to all exchange with one another past that limit:
// in each pod's namespace, every other pod it reaches on-link (on one
// bridge, or one macvlan parent: N·(N-1) entries for N pods) gets a
// permanent neighbour entry, which the limit does not count, instead of
// one ARP would learn (Config.StaticNeighbours does the same for a
// pod and its gateway while a pod is built). Each pod's entries are
// recorded as one line with their count, not a line each. A peer routed
// through a gateway is left to ARP; dynamic is how many entries those
// still need, the pod's for its gateway and the gateway's for the pod.
// Pods pinned before are not looked up again. A lab whose operations run
// as commands (Config.Commands) pins nothing: dynamic is then -1.
func (l *Lab) PinPeers(ctx context.Context, pods []*Pod) (dynamic int, err error) {
	if l.nl == nil {
		return -1, nil
	}
	// pods sharing a namespace (a host's, in host networking) are one
	var own []*Pod
	seenNS := map[string]bool{}
	for _, p := range pods {
		if !seenNS[p.NetNS] {
			seenNS[p.NetNS] = true
			own = append(own, p)
		}
	}
	pods = own
	macs := make([]net.HardwareAddr, len(pods))
	if err := l.Each(ctx, len(pods), func(_ context.Context, i int) error {
		if p := pods[i]; p.Dev != "" && p.IP.IsValid() {
			macs[i], _ = l.nl.HardwareAddr(p.NetNS, p.Dev) // none: left to ARP
		}
		return nil
	}); err != nil {
		return 0, err
	}
	gws := make([]int, len(pods))
	err = l.Each(ctx, len(pods), func(_ context.Context, i int) error {
		from := pods[i]
		l.mu.Lock()
		if l.hops == nil {
			l.hops = map[string]map[netip.Addr]netip.Addr{}
		}
		known := l.hops[from.NetNS]
		if known == nil {
			known = map[netip.Addr]netip.Addr{}
			l.hops[from.NetNS] = known
		}
		var peers []iproute.Peer
		seen := map[netip.Addr]bool{}
		count := func(to, hop netip.Addr) {
			if hop != to && !seen[hop] {
				seen[hop] = true
				gws[i]++
			}
		}
		for j, to := range pods {
			if to.NetNS == from.NetNS || macs[j] == nil {
				continue
			}
			if hop, ok := known[to.IP]; ok {
				count(to.IP, hop)
				continue
			}
			peers = append(peers, iproute.Peer{IP: to.IP, MAC: macs[j]})
		}
		l.mu.Unlock()
		if len(peers) == 0 {
			return nil
		}
		hops, dev, err := l.nl.PinOnLink(from.NetNS, peers)
		if err != nil {
			return fmt.Errorf("pod %s: %w", from.Name, err)
		}
		pinned := 0
		l.mu.Lock()
		for k, p := range peers {
			known[p.IP] = hops[k]
			count(p.IP, hops[k])
			if hops[k] == p.IP {
				pinned++
			}
		}
		l.mu.Unlock()
		if pinned > 0 {
			l.logLine(fmt.Sprintf("ip -n %s neigh replace PEER lladdr PEERMAC dev %s nud permanent  # for each of %d on-link peers", from.NetNS, dev, pinned))
		}
		return nil
	})
	for _, g := range gws {
		dynamic += 2 * g
	}
	return dynamic, err
}
