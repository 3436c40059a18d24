package iproute

import (
	"net/netip"
	"strings"
	"testing"
)

func TestArgv(t *testing.T) {
	p := netip.MustParsePrefix
	a := netip.MustParseAddr
	mac := MustMAC("0e:f1:00:00:00:02")
	cases := []struct {
		op   Op
		want string
	}{
		{Bridge{Name: "cni0", MTU: 1450}, "ip -n NS link add cni0 mtu 1450 type bridge"},
		{Bridge{Name: "cni0", Address: mac, MTU: 1500}, "ip -n NS link add cni0 address 0e:f1:00:00:00:02 mtu 1500 type bridge"},
		{Veth{Name: "vethc1", MTU: 1500, Peer: "eth0", PeerNS: "POD"}, "ip -n NS link add vethc1 mtu 1500 type veth peer name eth0 mtu 1500 netns POD"},
		{Veth{Name: "lxc1", Address: mac, MTU: 1500, Peer: "eth0", PeerAddress: mac, PeerNS: "POD"},
			"ip -n NS link add lxc1 address 0e:f1:00:00:00:02 mtu 1500 type veth peer name eth0 address 0e:f1:00:00:00:02 mtu 1500 netns POD"},
		{VXLAN{Name: "flannel.1", VNI: 1, Local: a("10.100.0.1"), Dev: "eth0", Port: 8472},
			"ip -n NS link add flannel.1 type vxlan id 1 local 10.100.0.1 dev eth0 dstport 8472 nolearning"},
		{VXLAN{Name: "vxlan0", MTU: 1450, VNI: 256, Local: a("10.100.0.1"), Port: 4789, Proxy: true},
			"ip -n NS link add vxlan0 mtu 1450 type vxlan id 256 local 10.100.0.1 dstport 4789 nolearning proxy"},
		{Sublink{Kind: "macvlan", Parent: "eth0", Name: "eth0", NetNS: "POD", MTU: 1500, Mode: "bridge"},
			"ip -n NS link add link eth0 name eth0 netns POD mtu 1500 type macvlan mode bridge"},
		{Tunnel{Kind: "gre", Name: "gre-h2", Local: a("10.100.0.1"), Remote: a("10.100.0.2"), TTL: 64},
			"ip -n NS link add gre-h2 type gre local 10.100.0.1 remote 10.100.0.2 ttl 64"},
		{Tunnel{Kind: "ipip", Name: "tunl0"}, "ip -n NS link add tunl0 type ipip"},
		{Tuntap{Name: "flannel0", Mode: "tun"}, "ip -n NS tuntap add dev flannel0 mode tun"},
		{LinkSet{Name: "flannel.1", Address: mac, MTU: 1450}, "ip -n NS link set flannel.1 address 0e:f1:00:00:00:02 mtu 1450"},
		{LinkSet{Name: "vethc1", Master: "cni0", Up: true}, "ip -n NS link set vethc1 master cni0 up"},
		{LinkSet{Name: "vxlan0", NetNS: "OV"}, "ip -n NS link set vxlan0 netns OV"},
		{Up("lo"), "ip -n NS link set lo up"},
		{Addr{Prefix: p("10.244.1.2/24"), Dev: "eth0"}, "ip -n NS addr add 10.244.1.2/24 dev eth0"},
		{Route{Via: a("10.244.1.1")}, "ip -n NS route add default via 10.244.1.1"},
		{Route{Dst: p("10.244.2.0/24"), Via: a("10.244.2.0"), Dev: "flannel.1", OnLink: true}, "ip -n NS route add 10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink"},
		{Route{Blackhole: true, Dst: p("10.244.1.0/24")}, "ip -n NS route add blackhole 10.244.1.0/24"},
		{Route{Dst: p("169.254.1.1/32"), Dev: "eth0", ScopeLink: true}, "ip -n NS route add 169.254.1.1/32 dev eth0 scope link"},
		{Route{Dev: "eth0"}, "ip -n NS route add default dev eth0"},
		{Neigh{IP: a("10.244.2.0"), MAC: mac, Dev: "flannel.1"}, "ip -n NS neigh add 10.244.2.0 lladdr 0e:f1:00:00:00:02 dev flannel.1 nud permanent"},
		{FDB{MAC: mac, Dev: "flannel.1", Dst: a("10.100.0.2"), Append: true}, "bridge -n NS fdb append 0e:f1:00:00:00:02 dev flannel.1 dst 10.100.0.2 self permanent"},
		{FDB{MAC: mac, Dev: "vxlan0", Dst: a("10.100.0.2")}, "bridge -n NS fdb add 0e:f1:00:00:00:02 dev vxlan0 dst 10.100.0.2 self permanent"},
		{SysctlSet("net.ipv4.ip_forward", "1"), "ip netns exec NS sysctl -q -w net.ipv4.ip_forward=1"},
		{Sysctl{IgnoreMissing: true, Set: [][2]string{{"a.b", "0"}, {"c.d", "1 2"}}}, "ip netns exec NS sysctl -q -e -w a.b=0 c.d=1 2"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := strings.Join(c.op.Argv("NS"), " "); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestSysctlPath(t *testing.T) {
	for key, want := range map[string]string{
		"net.ipv4.ip_forward":               "/proc/sys/net/ipv4/ip_forward",
		"net.ipv4.conf.calic1.proxy_arp":    "/proc/sys/net/ipv4/conf/calic1/proxy_arp",
		"net/ipv4/conf/flannel.1/rp_filter": "/proc/sys/net/ipv4/conf/flannel.1/rp_filter",
		"net.ipv4.neigh.calic1.proxy_delay": "/proc/sys/net/ipv4/neigh/calic1/proxy_delay",
	} {
		if got := SysctlPath(key); got != want {
			t.Errorf("SysctlPath(%q) = %s, want %s", key, got, want)
		}
	}
}
