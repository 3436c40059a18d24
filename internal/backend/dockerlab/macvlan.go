package dockerlab

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"

	"github.com/cnperf/cnperf/internal/dockerengine"
)

// docker-lab's macvlan is a Docker macvlan network in bridge mode on each
// engine, as `docker network create -d macvlan` makes it on a real host:
//
//	docker network create --driver macvlan -o parent=eth0 -o macvlan_mode=bridge \
//	  --subnet 10.244.0.0/16 --ip-range 10.244.N.0/24 --gateway 10.244.N.1 \
//	  --aux-address first=10.244.N.0 --aux-address last=10.244.N.255 cnperf-IDs0-macvlan
//
// The parent, eth0, is the lab host's own underlay link: the engine runs
// in that host's network namespace, so the link it is given is lab-owned
// and nothing of the machine's namespace is touched (why --backend docker,
// whose engine is the machine's, refuses macvlan). The subnet is the lab's
// whole pod network, so every container of every host is on-link, and each
// engine hands out addresses from its own host's /24 only (as the lab's
// macvlan replica does, and as a macvlan network spanning real hosts needs:
// a macvlan network is local to its engine, and two engines with the same
// range would give two containers one address). The containers get .2,
// .3... as the replica's pods do: the gateway .1 is reserved (nothing
// answers there; the workloads never leave the pod network), and so are
// the range's first and last addresses, which the engine would otherwise
// hand out, the pod network being the /16. Same-host containers meet in the parent's macvlan bridge, and
// cross-host ones across the lab's switch, as L2 neighbours.
//
// As with every macvlan setup, a container cannot reach its own host's
// underlay address (the parent does not see frames from its children);
// it reaches other hosts' addresses, and the coordinator reaches the agents
// over their unix sockets, so nothing of cnperf's needs that path.
//
// libnetwork lets one macvlan network use a parent link, and no two
// networks on one engine overlap, so the network is the cluster's: made on
// an engine when the first macvlan deployment needs it there, labelled
// with the run, removed when the last one using it is torn down.

// macvlanName is the run's macvlan network's name on every engine.
func (c *cluster) macvlanName() string { return "cnperf-" + c.lab.ID + "-macvlan" }

// macvlanLabel is the deploy label of the macvlan networks.
func (c *cluster) macvlanLabel() string { return c.lab.ID + "-macvlan" }

// acquireMacvlan makes the macvlan network on host's engine, the first
// time, and takes a reference to it.
func (c *cluster) acquireMacvlan(ctx context.Context, host int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	en, err := c.engineLocked(ctx, host)
	if err != nil {
		return err
	}
	if c.macRefs[host] > 0 {
		c.macRefs[host]++
		return nil
	}
	h := en.host
	for _, r := range c.lab.Hosts {
		if !h.Underlay.Contains(r.IP) {
			return fmt.Errorf("docker-lab's macvlan needs the lab hosts on one L2 segment: %s (%s) and %s (%s) are not; use docker-overlay", h.Name, h.Underlay, r.Name, r.Underlay)
		}
	}
	name := c.macvlanName()
	cfg := dockerengine.NetworkConfig{
		Name: name, Driver: "macvlan", CheckDuplicate: true,
		Labels: map[string]string{dockerengine.LabelRun: c.run, dockerengine.LabelDeploy: c.macvlanLabel(),
			dockerengine.LabelPID: strconv.Itoa(os.Getpid())},
		Options: map[string]string{"parent": h.Dev, "macvlan_mode": "bridge"},
		IPAM: &dockerengine.IPAM{Driver: "default", Config: []dockerengine.IPAMConfig{{
			Subnet: c.lab.Cfg.PodNet.String(), IPRange: h.PodCIDR.String(), Gateway: h.PodGateway().String(),
			AuxAddresses: map[string]string{"first": h.PodCIDR.Masked().Addr().String(), "last": lastAddr(h.PodCIDR).String()}}}},
	}
	ic := cfg.IPAM.Config[0]
	c.record(host, "network create --driver macvlan -o parent=%s -o macvlan_mode=bridge --subnet %s --ip-range %s --gateway %s --aux-address first=%s --aux-address last=%s %s",
		h.Dev, ic.Subnet, ic.IPRange, ic.Gateway, ic.AuxAddresses["first"], ic.AuxAddresses["last"], name)
	if _, err := en.e.CreateNetwork(ctx, cfg); err != nil {
		return fmt.Errorf("creating macvlan network %s on %s: %w", name, h.Name, err)
	}
	c.macRefs[host] = 1
	return nil
}

// releaseMacvlan drops a reference to host's macvlan network, removing
// it with the last (the containers on it are gone by then).
func (c *cluster) releaseMacvlan(ctx context.Context, host int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.macRefs[host]--; c.macRefs[host] > 0 {
		return nil
	}
	delete(c.macRefs, host)
	en := c.engines[host]
	if en == nil {
		return nil
	}
	ns, err := en.e.Networks(ctx, dockerengine.LabelDeploy+"="+c.macvlanLabel())
	if err != nil {
		return err
	}
	for _, n := range ns {
		if err := en.e.RemoveNetwork(ctx, n.ID); err != nil {
			return fmt.Errorf("macvlan network %s on %s: %w", n.Name, en.host.Name, err)
		}
	}
	return nil
}

// lastAddr is p's last address (its broadcast address, were it a subnet).
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		a[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(a)
}
