// Package iproute holds the typed operations a lab makes on a network
// namespace: links, addresses, routes, neighbours, FDB entries, bridge ports
// and sysctls. Each is applied through netlink (the way the CNI plugins,
// Flannel, Calico and Docker program the kernel: one handle per namespace,
// no process per step) and is recorded as its iproute2 equivalent, the
// command line `ip` or `bridge` would need for the same change. So a run's
// record of what it built, and the golden tests of every network, still
// read as commands anyone can paste.
//
// An Op never parses text: it is a struct whose Argv renders the command
// and whose apply makes the netlink call. Netlink applies ops natively;
// anything else (a Recorder, or the command runner with
// lab.Config.Commands) receives Argv.
package iproute

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Op is one change to the network configuration of a namespace.
type Op interface {
	// Argv is the equivalent command line for the change in namespace ns.
	Argv(ns string) []string
	// apply makes the change through c, a connection to ns.
	apply(c *conn) error
}

func ipn(ns string, args ...string) []string { return append([]string{"ip", "-n", ns}, args...) }

func itoa(n int) string { return strconv.Itoa(n) }

// Bridge creates a Linux bridge (with a fixed address when Address is
// set; else the kernel's choice, which follows its ports):
//
//	ip -n NS link add NAME [address MAC] [mtu MTU] type bridge
type Bridge struct {
	Name    string
	Address net.HardwareAddr
	MTU     int
}

// Argv implements Op.
func (o Bridge) Argv(ns string) []string {
	a := appendAddrMTU(ipn(ns, "link", "add", o.Name), o.Address, o.MTU)
	return append(a, "type", "bridge")
}

// Veth creates a veth pair, its peer moved to namespace PeerNS:
//
//	ip -n NS link add NAME [address MAC] [mtu MTU] type veth peer name PEER [address PMAC] [mtu MTU] [netns PEERNS]
//
// The peer gets the same MTU.
type Veth struct {
	Name        string
	Address     net.HardwareAddr
	MTU         int
	Peer        string
	PeerAddress net.HardwareAddr
	PeerNS      string
}

// Argv implements Op.
func (o Veth) Argv(ns string) []string {
	a := ipn(ns, "link", "add", o.Name)
	a = appendAddrMTU(a, o.Address, o.MTU)
	a = append(a, "type", "veth", "peer", "name", o.Peer)
	a = appendAddrMTU(a, o.PeerAddress, o.MTU)
	if o.PeerNS != "" {
		a = append(a, "netns", o.PeerNS)
	}
	return a
}

func appendAddrMTU(a []string, mac net.HardwareAddr, mtu int) []string {
	if mac != nil {
		a = append(a, "address", mac.String())
	}
	if mtu > 0 {
		a = append(a, "mtu", itoa(mtu))
	}
	return a
}

// VXLAN creates a VXLAN device (learning off unless Learning):
//
//	ip -n NS link add NAME [mtu MTU] type vxlan id VNI local IP [dev DEV] dstport PORT nolearning [proxy]
type VXLAN struct {
	Name     string
	MTU      int
	VNI      int
	Local    netip.Addr
	Dev      string // the underlay device, "" for none
	Port     int
	Learning bool
	Proxy    bool
}

// Argv implements Op.
func (o VXLAN) Argv(ns string) []string {
	a := ipn(ns, "link", "add", o.Name)
	if o.MTU > 0 {
		a = append(a, "mtu", itoa(o.MTU))
	}
	a = append(a, "type", "vxlan", "id", itoa(o.VNI), "local", o.Local.String())
	if o.Dev != "" {
		a = append(a, "dev", o.Dev)
	}
	a = append(a, "dstport", itoa(o.Port))
	if !o.Learning {
		a = append(a, "nolearning")
	}
	if o.Proxy {
		a = append(a, "proxy")
	}
	return a
}

// Sublink creates a macvlan or ipvlan device on Parent, named Name inside
// namespace NetNS:
//
//	ip -n NS link add link PARENT name NAME netns NETNS mtu MTU type macvlan|ipvlan mode MODE
type Sublink struct {
	Kind   string // "macvlan" or "ipvlan"
	Parent string
	Name   string
	NetNS  string
	MTU    int
	Mode   string // macvlan: bridge, private, vepa, passthru; ipvlan: l2, l3, l3s
}

// Argv implements Op.
func (o Sublink) Argv(ns string) []string {
	a := ipn(ns, "link", "add", "link", o.Parent, "name", o.Name)
	if o.NetNS != "" {
		a = append(a, "netns", o.NetNS)
	}
	if o.MTU > 0 {
		a = append(a, "mtu", itoa(o.MTU))
	}
	return append(a, "type", o.Kind, "mode", o.Mode)
}

// Tunnel creates an IP-in-IP or GRE tunnel device:
//
//	ip -n NS link add NAME type ipip|gre [local IP remote IP] [ttl TTL]
type Tunnel struct {
	Kind          string // "ipip" or "gre"
	Name          string
	Local, Remote netip.Addr // invalid: any (ipip's fallback-like tunl0)
	TTL           int
}

// Argv implements Op.
func (o Tunnel) Argv(ns string) []string {
	a := ipn(ns, "link", "add", o.Name, "type", o.Kind)
	if o.Local.IsValid() {
		a = append(a, "local", o.Local.String())
	}
	if o.Remote.IsValid() {
		a = append(a, "remote", o.Remote.String())
	}
	if o.TTL > 0 {
		a = append(a, "ttl", itoa(o.TTL))
	}
	return a
}

// Tuntap creates a persistent TUN or TAP device, as `ip tuntap add` does
// (no packet information header):
//
//	ip -n NS tuntap add dev NAME mode tun|tap
type Tuntap struct {
	Name string
	Mode string // "tun" or "tap"
}

// Argv implements Op.
func (o Tuntap) Argv(ns string) []string {
	return ipn(ns, "tuntap", "add", "dev", o.Name, "mode", o.Mode)
}

// LinkSet changes a link: its address, MTU, bridge port, namespace, state:
//
//	ip -n NS link set NAME [address MAC] [mtu MTU] [master BRIDGE] [netns NETNS] [up]
type LinkSet struct {
	Name    string
	Address net.HardwareAddr
	MTU     int
	Master  string
	NetNS   string
	Up      bool
}

// Up is `ip -n NS link set NAME up`.
func Up(name string) LinkSet { return LinkSet{Name: name, Up: true} }

// Argv implements Op.
func (o LinkSet) Argv(ns string) []string {
	a := ipn(ns, "link", "set", o.Name)
	if o.Address != nil {
		a = append(a, "address", o.Address.String())
	}
	if o.MTU > 0 {
		a = append(a, "mtu", itoa(o.MTU))
	}
	if o.Master != "" {
		a = append(a, "master", o.Master)
	}
	if o.NetNS != "" {
		a = append(a, "netns", o.NetNS)
	}
	if o.Up {
		a = append(a, "up")
	}
	return a
}

// Addr adds an address to a link:
//
//	ip -n NS addr add PREFIX dev DEV
type Addr struct {
	Prefix netip.Prefix
	Dev    string
}

// Argv implements Op.
func (o Addr) Argv(ns string) []string {
	return ipn(ns, "addr", "add", o.Prefix.String(), "dev", o.Dev)
}

// Route adds a route to the main table. A zero Dst is the default route.
// Without Via the route is on-link (scope link, as ip makes it):
//
//	ip -n NS route add [blackhole] DST|default [via GW] [dev DEV] [scope link] [onlink]
type Route struct {
	Dst       netip.Prefix // invalid: default
	Blackhole bool
	Via       netip.Addr
	Dev       string
	ScopeLink bool // say "scope link" (ip infers it for a route without via anyway)
	OnLink    bool
}

// Argv implements Op.
func (o Route) Argv(ns string) []string {
	a := ipn(ns, "route", "add")
	if o.Blackhole {
		a = append(a, "blackhole")
	}
	if o.Dst.IsValid() {
		a = append(a, o.Dst.String())
	} else {
		a = append(a, "default")
	}
	if o.Via.IsValid() {
		a = append(a, "via", o.Via.String())
	}
	if o.Dev != "" {
		a = append(a, "dev", o.Dev)
	}
	if o.ScopeLink {
		a = append(a, "scope", "link")
	}
	if o.OnLink {
		a = append(a, "onlink")
	}
	return a
}

// Neigh adds a permanent neighbour (ARP) entry:
//
//	ip -n NS neigh add IP lladdr MAC dev DEV nud permanent
type Neigh struct {
	IP  netip.Addr
	MAC net.HardwareAddr
	Dev string
}

// Argv implements Op.
func (o Neigh) Argv(ns string) []string {
	return ipn(ns, "neigh", "add", o.IP.String(), "lladdr", o.MAC.String(), "dev", o.Dev, "nud", "permanent")
}

// FDB adds a permanent forwarding entry to a VXLAN device's own table,
// sending frames for MAC to the remote VTEP Dst; Append adds it beside any
// entries for the same MAC (as Flannel does), else it must be new:
//
//	bridge -n NS fdb add|append MAC dev DEV dst IP self permanent
type FDB struct {
	MAC    net.HardwareAddr
	Dev    string
	Dst    netip.Addr
	Append bool
}

// Argv implements Op.
func (o FDB) Argv(ns string) []string {
	verb := "add"
	if o.Append {
		verb = "append"
	}
	return []string{"bridge", "-n", ns, "fdb", verb, o.MAC.String(), "dev", o.Dev, "dst", o.Dst.String(), "self", "permanent"}
}

// Sysctl sets per-namespace sysctls by writing their files under
// /proc/sys from inside the namespace; IgnoreMissing skips a key this
// kernel lacks (sysctl -e):
//
//	ip netns exec NS sysctl -q [-e] -w KEY=VALUE...
type Sysctl struct {
	Set           [][2]string
	IgnoreMissing bool
}

// SysctlSet is the Sysctl of one key.
func SysctlSet(key, value string) Sysctl { return Sysctl{Set: [][2]string{{key, value}}} }

// Argv implements Op.
func (o Sysctl) Argv(ns string) []string {
	a := []string{"ip", "netns", "exec", ns, "sysctl", "-q"}
	if o.IgnoreMissing {
		a = append(a, "-e")
	}
	a = append(a, "-w")
	for _, kv := range o.Set {
		a = append(a, kv[0]+"="+kv[1])
	}
	return a
}

// MustMAC parses a MAC address written by the program itself.
func MustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(fmt.Sprintf("iproute: MAC %q: %v", s, err))
	}
	return m
}
