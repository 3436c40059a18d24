package iproute

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// RunDir is where named network namespaces are bound, as iproute2 keeps them.
const RunDir = "/run/netns"

// Netlink applies ops through one netlink handle per namespace, opened on
// first use and kept for the namespaces used last (at most Keep of them,
// so that a lab of a thousand pods does not hold two thousand
// descriptors), closed when the namespace is deleted or at Close. It is
// safe for concurrent use: handles serialise their own requests, and the
// kernel serialises what must be.
type Netlink struct {
	// Keep bounds the namespaces held open while unused (default 64).
	Keep  int
	mu    sync.Mutex
	conns map[string]*conn
	tick  uint64
}

// conn is what Netlink holds open for one namespace: a file descriptor
// on it (to move links into it, and to enter it) and a netlink handle in it.
type conn struct {
	ns   string
	fd   int
	h    *netlink.Handle
	nl   *Netlink
	refs int    // callers using it now; guarded by nl.mu
	used uint64 // when it was last released, in nl.tick
	gone bool   // forgotten while in use: the last user closes it

	// idx caches interface indexes by name: most operations name a
	// device the kernel knows by index, and asking costs a round trip
	// (and the kernel a full link dump of it). A name leaves the cache
	// when its device moves away, and every name does on any failure.
	mu  sync.Mutex
	idx map[string]int
}

// NewNetlink makes an applier with no handle open yet.
func NewNetlink() *Netlink { return &Netlink{conns: map[string]*conn{}} }

// Apply makes op in namespace ns. A failure reads like the command's:
// the equivalent command line, then the kernel's reason.
func (n *Netlink) Apply(ns string, op Op) error {
	c, err := n.acquire(ns)
	if err == nil {
		err = op.apply(c)
		if err != nil {
			c.forgetIndexes()
		}
		n.release(c)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(op.Argv(ns), " "), err)
	}
	return nil
}

// acquire returns the connection to ns, opened on first use, for the
// caller to release when done with it.
func (n *Netlink) acquire(ns string) (*conn, error) {
	n.mu.Lock()
	if c := n.conns[ns]; c != nil {
		c.refs++
		n.mu.Unlock()
		return c, nil
	}
	n.mu.Unlock()
	fd, err := unix.Open(nsPath(ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ns, err)
	}
	h, err := netlink.NewHandleAt(netns.NsHandle(fd), unix.NETLINK_ROUTE)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink handle in %s: %w", ns, err)
	}
	return n.keep(&conn{ns: ns, fd: fd, h: h, nl: n}), nil
}

// keep registers c, acquired, unless another caller opened ns meanwhile,
// and returns the one kept.
func (n *Netlink) keep(c *conn) *conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	if old := n.conns[c.ns]; old != nil {
		c.close()
		old.refs++
		return old
	}
	c.refs = 1
	n.conns[c.ns] = c
	return c
}

// release ends a use of c; the least recently used idle connections past
// Keep are closed.
func (n *Netlink) release(c *conn) {
	n.mu.Lock()
	c.refs--
	n.tick++
	c.used = n.tick
	var closing []*conn
	if c.refs == 0 && c.gone {
		closing = append(closing, c)
	}
	keep := n.Keep
	if keep <= 0 {
		keep = 64
	}
	for len(n.conns) > keep {
		var oldest *conn
		for _, x := range n.conns {
			if x.refs == 0 && (oldest == nil || x.used < oldest.used) {
				oldest = x
			}
		}
		if oldest == nil {
			break // every one in use
		}
		delete(n.conns, oldest.ns)
		closing = append(closing, oldest)
	}
	n.mu.Unlock()
	for _, x := range closing {
		x.close()
	}
}

func (c *conn) close() {
	c.h.Close()
	unix.Close(c.fd)
}

// Forget closes what is held open on ns (before it is deleted: an open
// descriptor keeps a namespace alive); a connection in use is closed by
// its last user.
func (n *Netlink) Forget(ns string) {
	n.mu.Lock()
	c := n.conns[ns]
	delete(n.conns, ns)
	if c != nil && c.refs > 0 {
		c.gone, c = true, nil
	}
	n.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// OperUp reports whether device dev of namespace ns is operationally up
// (its carrier seen by the kernel's link watch: a bridge port forwards
// from then on).
func (n *Netlink) OperUp(ns, dev string) (bool, error) {
	c, err := n.acquire(ns)
	if err != nil {
		return false, err
	}
	defer n.release(c)
	l, err := c.h.LinkByName(dev)
	if err != nil {
		return false, fmt.Errorf("device %q in %s: %w", dev, ns, err)
	}
	return l.Attrs().OperState == netlink.OperUp, nil
}

// Open reports how many namespaces have a handle open.
func (n *Netlink) Open() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.conns)
}

// Close closes every handle not in use (all of them, once no call runs).
func (n *Netlink) Close() {
	n.mu.Lock()
	cs := n.conns
	n.conns = map[string]*conn{}
	var closing []*conn
	for _, c := range cs {
		if c.refs > 0 {
			c.gone = true
			continue
		}
		closing = append(closing, c)
	}
	n.mu.Unlock()
	for _, c := range closing {
		c.close()
	}
}

func nsPath(ns string) string {
	if strings.HasPrefix(ns, "/") {
		return ns
	}
	return filepath.Join(RunDir, ns)
}

var shareRunDir struct {
	once sync.Once
	err  error
}

// prepareRunDir makes RunDir a mount point with shared propagation, once
// per process, exactly as `ip netns add` does, so that a namespace bound
// there later is seen (and unbound) in every mount namespace, those of
// processes started with `ip netns exec` included.
func prepareRunDir() error {
	shareRunDir.once.Do(func() {
		if err := os.MkdirAll(RunDir, 0o755); err != nil {
			shareRunDir.err = err
			return
		}
		made := false
		for {
			err := unix.Mount("", RunDir, "none", unix.MS_SHARED|unix.MS_REC, "")
			if err == nil {
				return
			}
			if !errors.Is(err, unix.EINVAL) || made {
				shareRunDir.err = fmt.Errorf("making %s shared: %w", RunDir, err)
				return
			}
			if err := unix.Mount(RunDir, RunDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				shareRunDir.err = fmt.Errorf("binding %s: %w", RunDir, err)
				return
			}
			made = true
		}
	})
	return shareRunDir.err
}

// AddNS creates the named namespace (`ip netns add NS`) and brings its
// loopback up (`ip -n NS link set lo up`); made says whether the namespace
// exists, to be deleted, even when bringing lo up failed. The calling goroutine's thread
// enters the new namespace to make it and its netlink handle, and returns
// to its own before it is unlocked; should returning fail, the thread stays
// locked and Go retires it with the goroutine.
func (n *Netlink) AddNS(ns string) (made bool, err error) {
	if err := prepareRunDir(); err != nil {
		return false, err
	}
	path := nsPath(ns)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0)
	if err != nil {
		return false, fmt.Errorf("ip netns add %s: %w", ns, err)
	}
	f.Close()
	c, err := newNS(ns, path)
	if err != nil {
		_ = os.Remove(path)
		return false, fmt.Errorf("ip netns add %s: %w", ns, err)
	}
	c.nl = n
	c = n.keep(c)
	defer n.release(c)
	if err := c.linkUp("lo"); err != nil {
		return true, fmt.Errorf("ip -n %s link set lo up: %w", ns, err)
	}
	return true, nil
}

func newNS(ns, path string) (_ *conn, err error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer unix.Close(orig)
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	c, err := inNewNS(ns, path)
	if serr := unix.Setns(orig, unix.CLONE_NEWNET); serr != nil {
		if c != nil {
			c.close()
		}
		return nil, fmt.Errorf("returning from %s: %w", ns, serr) // the thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return c, err
}

// inNewNS binds the calling thread's (new) namespace at path and opens a
// handle in it, while the thread is there.
func inNewNS(ns, path string) (*conn, error) {
	if err := unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("binding: %w", err)
	}
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &conn{ns: ns, fd: fd, h: h}, nil
}

// DelNS deletes the named namespace (`ip netns del NS`): what it holds goes
// when the last process and descriptor in it do. A namespace already gone
// is not an error.
func (n *Netlink) DelNS(ns string) error {
	n.Forget(ns)
	path := nsPath(ns)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("ip netns del %s: %w", ns, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("ip netns del %s: %w", ns, err)
	}
	return nil
}

// in runs fn with the calling thread inside the connection's namespace.
func (c *conn) in(fn func() error) error {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer unix.Close(orig)
	if err := unix.Setns(c.fd, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering %s: %w", c.ns, err)
	}
	ferr := fn()
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("returning from %s: %w", c.ns, err) // thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return ferr
}

// peer is a descriptor on namespace ns for moving a link there, valid
// until done is called.
func (c *conn) peer(ns string) (fd int, done func(), err error) {
	p, err := c.nl.acquire(ns)
	if err != nil {
		return -1, nil, err
	}
	return p.fd, func() { c.nl.release(p) }, nil
}

// loopbackIndex is the index the kernel gives every namespace's lo.
const loopbackIndex = 1

func (c *conn) index(name string) (int, error) {
	if name == "lo" {
		return loopbackIndex, nil
	}
	c.mu.Lock()
	i, ok := c.idx[name]
	c.mu.Unlock()
	if ok {
		return i, nil
	}
	l, err := c.h.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("device %q: %w", name, err)
	}
	c.remember(name, l.Attrs().Index)
	return l.Attrs().Index, nil
}

func (c *conn) remember(name string, index int) {
	if index <= 0 {
		return
	}
	c.mu.Lock()
	if c.idx == nil {
		c.idx = map[string]int{}
	}
	c.idx[name] = index
	c.mu.Unlock()
}

func (c *conn) forget(name string) {
	c.mu.Lock()
	delete(c.idx, name)
	c.mu.Unlock()
}

func (c *conn) forgetIndexes() {
	c.mu.Lock()
	c.idx = nil
	c.mu.Unlock()
}

// link is a handle on device name for the netlink calls that take one:
// only its index is read.
func (c *conn) link(name string) (netlink.Link, error) {
	i, err := c.index(name)
	if err != nil {
		return nil, err
	}
	a := netlink.NewLinkAttrs()
	a.Name, a.Index = name, i
	return &netlink.Device{LinkAttrs: a}, nil
}

func (c *conn) linkUp(name string) error {
	l, err := c.link(name)
	if err != nil {
		return err
	}
	return c.h.LinkSetUp(l)
}

// add creates link and remembers its index (netlink.Handle.LinkAdd reads
// it back into the link's attributes).
func (c *conn) add(link netlink.Link) error {
	if err := c.h.LinkAdd(link); err != nil {
		return err
	}
	c.remember(link.Attrs().Name, link.Attrs().Index)
	return nil
}

// attrs are a new link's attributes as `ip link add` leaves them: the
// kernel's default queue length.
func attrs(name string, mtu int, mac net.HardwareAddr) netlink.LinkAttrs {
	a := netlink.NewLinkAttrs()
	a.Name, a.MTU, a.HardwareAddr = name, mtu, mac
	return a
}

func (o Bridge) apply(c *conn) error {
	return c.add(&netlink.Bridge{LinkAttrs: attrs(o.Name, o.MTU, o.Address)})
}

func (o Veth) apply(c *conn) error {
	v := &netlink.Veth{LinkAttrs: attrs(o.Name, o.MTU, o.Address), PeerName: o.Peer, PeerHardwareAddr: o.PeerAddress, PeerTxQLen: -1}
	if o.PeerNS != "" {
		fd, done, err := c.peer(o.PeerNS)
		if err != nil {
			return err
		}
		defer done()
		v.PeerNamespace = netlink.NsFd(fd)
	}
	return c.add(v)
}

func (o VXLAN) apply(c *conn) error {
	v := &netlink.Vxlan{LinkAttrs: attrs(o.Name, o.MTU, nil), VxlanId: o.VNI, SrcAddr: net.IP(o.Local.AsSlice()),
		Port: o.Port, Learning: o.Learning, Proxy: o.Proxy}
	if o.Dev != "" {
		i, err := c.index(o.Dev)
		if err != nil {
			return err
		}
		v.VtepDevIndex = i
	}
	return c.add(v)
}

func (o Sublink) apply(c *conn) error {
	parent, err := c.index(o.Parent)
	if err != nil {
		return err
	}
	a := attrs(o.Name, o.MTU, nil)
	a.ParentIndex = parent
	if o.NetNS != "" {
		fd, done, err := c.peer(o.NetNS)
		if err != nil {
			return err
		}
		defer done()
		a.Namespace = netlink.NsFd(fd)
	}
	switch o.Kind {
	case "macvlan":
		modes := map[string]netlink.MacvlanMode{"bridge": netlink.MACVLAN_MODE_BRIDGE, "private": netlink.MACVLAN_MODE_PRIVATE,
			"vepa": netlink.MACVLAN_MODE_VEPA, "passthru": netlink.MACVLAN_MODE_PASSTHRU}
		m, ok := modes[o.Mode]
		if !ok {
			return fmt.Errorf("macvlan mode %q", o.Mode)
		}
		return c.h.LinkAdd(&netlink.Macvlan{LinkAttrs: a, Mode: m})
	case "ipvlan":
		modes := map[string]netlink.IPVlanMode{"l2": netlink.IPVLAN_MODE_L2, "l3": netlink.IPVLAN_MODE_L3, "l3s": netlink.IPVLAN_MODE_L3S}
		m, ok := modes[o.Mode]
		if !ok {
			return fmt.Errorf("ipvlan mode %q", o.Mode)
		}
		return c.h.LinkAdd(&netlink.IPVlan{LinkAttrs: a, Mode: m})
	}
	return fmt.Errorf("link kind %q", o.Kind)
}

func (o Tunnel) apply(c *conn) error {
	a := attrs(o.Name, 0, nil)
	local, remote := ipOf(o.Local), ipOf(o.Remote)
	// iproute2 asks for path MTU discovery by default; a tunnel with a
	// TTL cannot be made without it
	switch o.Kind {
	case "ipip":
		return c.add(&netlink.Iptun{LinkAttrs: a, Local: local, Remote: remote, Ttl: uint8(o.TTL), PMtuDisc: 1})
	case "gre":
		return c.add(&netlink.Gretun{LinkAttrs: a, Local: local, Remote: remote, Ttl: uint8(o.TTL), PMtuDisc: 1})
	}
	return fmt.Errorf("tunnel kind %q", o.Kind)
}

func ipOf(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}

// ifreq is struct ifreq as TUNSETIFF reads it: a name and the flags.
type ifreq struct {
	name  [unix.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

func (o Tuntap) apply(c *conn) error {
	var flags uint16
	switch o.Mode {
	case "tun":
		flags = unix.IFF_TUN
	case "tap":
		flags = unix.IFF_TAP
	default:
		return fmt.Errorf("tuntap mode %q", o.Mode)
	}
	if len(o.Name) >= unix.IFNAMSIZ {
		return fmt.Errorf("device name %q too long", o.Name)
	}
	// the device is made in the namespace of whoever opens the clone
	// device, so the thread opens it from inside
	return c.in(func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var req ifreq
		copy(req.name[:], o.Name)
		req.flags = flags | unix.IFF_NO_PI
		if err := ioctl(fd, unix.TUNSETIFF, uintptr(unsafe.Pointer(&req))); err != nil {
			return fmt.Errorf("TUNSETIFF: %w", err)
		}
		if err := ioctl(fd, unix.TUNSETPERSIST, 1); err != nil {
			return fmt.Errorf("TUNSETPERSIST: %w", err)
		}
		return nil
	})
}

func ioctl(fd int, req uint, arg uintptr) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), arg); e != 0 {
		return e
	}
	return nil
}

func (o LinkSet) apply(c *conn) error {
	l, err := c.link(o.Name)
	if err != nil {
		return err
	}
	if o.Address != nil {
		if err := c.h.LinkSetHardwareAddr(l, o.Address); err != nil {
			return err
		}
	}
	if o.MTU > 0 {
		if err := c.h.LinkSetMTU(l, o.MTU); err != nil {
			return err
		}
	}
	if o.Master != "" {
		m, err := c.index(o.Master)
		if err != nil {
			return err
		}
		if err := c.h.LinkSetMasterByIndex(l, m); err != nil {
			return err
		}
	}
	if o.NetNS != "" {
		fd, done, err := c.peer(o.NetNS)
		if err != nil {
			return err
		}
		defer done()
		// netlink.Link.Attrs holds the index; a link that moved away is
		// not set up here
		if err := c.h.LinkSetNsFd(l, fd); err != nil {
			return err
		}
		c.forget(o.Name)
		if o.Up {
			return errors.New("cannot set a link up in the namespace it leaves")
		}
	}
	if o.Up {
		return c.h.LinkSetUp(l)
	}
	return nil
}

func (o Addr) apply(c *conn) error {
	l, err := c.link(o.Dev)
	if err != nil {
		return err
	}
	a := &netlink.Addr{IPNet: ipNet(o.Prefix)}
	if o.Prefix.Addr().Is4() {
		a.Broadcast = net.IPv4zero // as `ip addr add` without brd: none
	}
	return c.h.AddrAdd(l, a)
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func (o Route) apply(c *conn) error {
	r := &netlink.Route{}
	if o.Dst.IsValid() {
		r.Dst = ipNet(o.Dst.Masked())
	} else {
		// the default route: 0.0.0.0/0 of the gateway's family
		r.Dst = &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}
		if o.Via.Is6() {
			r.Dst = &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}
		}
	}
	if o.Dev != "" {
		i, err := c.index(o.Dev)
		if err != nil {
			return err
		}
		r.LinkIndex = i
	}
	switch {
	case o.Blackhole:
		r.Type = unix.RTN_BLACKHOLE
	case o.Via.IsValid():
		r.Gw = net.IP(o.Via.AsSlice())
		if o.ScopeLink {
			r.Scope = netlink.SCOPE_LINK
		}
	default:
		r.Scope = netlink.SCOPE_LINK // what ip infers for a route without a gateway
	}
	if o.OnLink {
		r.Flags |= int(netlink.FLAG_ONLINK)
	}
	return c.h.RouteAdd(r)
}

func (o Neigh) apply(c *conn) error {
	i, err := c.index(o.Dev)
	if err != nil {
		return err
	}
	return c.h.NeighAdd(&netlink.Neigh{LinkIndex: i, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
		IP: net.IP(o.IP.AsSlice()), HardwareAddr: o.MAC})
}

func (o FDB) apply(c *conn) error {
	i, err := c.index(o.Dev)
	if err != nil {
		return err
	}
	n := &netlink.Neigh{LinkIndex: i, Family: unix.AF_BRIDGE, State: netlink.NUD_PERMANENT, Flags: netlink.NTF_SELF,
		IP: net.IP(o.Dst.AsSlice()), HardwareAddr: o.MAC}
	if o.Append {
		return c.h.NeighAppend(n)
	}
	return c.h.NeighAdd(n)
}

func (o Sysctl) apply(c *conn) error {
	return c.in(func() error {
		for _, kv := range o.Set {
			if err := writeSysctl(kv[0], kv[1]); err != nil {
				if o.IgnoreMissing && errors.Is(err, os.ErrNotExist) {
					continue
				}
				return err
			}
		}
		return nil
	})
}

// writeSysctl writes one sysctl of the calling thread's namespace: the
// files under /proc/sys/net are those of the namespace the thread is in
// when it opens them.
func writeSysctl(key, value string) error {
	return os.WriteFile(SysctlPath(key), []byte(value), 0)
}

// SysctlPath is the file of a sysctl key: sysctl(8) takes dots or slashes
// between the parts; written with slashes, a part may hold a dot (an
// interface "flannel.1").
func SysctlPath(key string) string {
	if !strings.Contains(key, "/") {
		key = strings.ReplaceAll(key, ".", "/")
	}
	return filepath.Join("/proc/sys", key)
}

// HardwareAddr reports device dev's link-layer address in namespace ns.
func (n *Netlink) HardwareAddr(ns, dev string) (net.HardwareAddr, error) {
	c, err := n.acquire(ns)
	if err != nil {
		return nil, err
	}
	defer n.release(c)
	l, err := c.h.LinkByName(dev)
	if err != nil {
		return nil, fmt.Errorf("device %q in %s: %w", dev, ns, err)
	}
	return l.Attrs().HardwareAddr, nil
}

// Peer is an address a namespace sends to, and the link-layer address
// that answers for it when it is on-link.
type Peer struct {
	IP  netip.Addr
	MAC net.HardwareAddr
}

// PinOnLink looks up, in namespace ns, the route to each peer (as
// `ip route get` does). A peer reached on-link gets a permanent
// neighbour entry, replacing whatever the namespace had for it:
//
//	ip -n NS neigh replace IP lladdr MAC dev DEV nud permanent
//
// hops[i] is peer i's next hop: the peer itself when pinned, else the
// gateway whose entry stays to ARP. dev is the device of the last pinned
// entry.
func (n *Netlink) PinOnLink(ns string, peers []Peer) (hops []netip.Addr, dev string, err error) {
	c, err := n.acquire(ns)
	if err != nil {
		return nil, "", err
	}
	defer n.release(c)
	names := map[int]string{}
	hops = make([]netip.Addr, len(peers))
	for i, p := range peers {
		rs, err := c.h.RouteGet(net.IP(p.IP.AsSlice()))
		if err != nil || len(rs) == 0 {
			return nil, "", fmt.Errorf("ip -n %s route get %s: %v", ns, p.IP, err)
		}
		r := rs[0]
		if gw, ok := netip.AddrFromSlice(r.Gw); ok && len(r.Gw) > 0 {
			hops[i] = gw.Unmap()
			continue
		}
		hops[i] = p.IP
		if err := c.h.NeighSet(&netlink.Neigh{LinkIndex: r.LinkIndex, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
			IP: net.IP(p.IP.AsSlice()), HardwareAddr: p.MAC}); err != nil {
			return nil, "", fmt.Errorf("ip -n %s neigh replace %s lladdr %s nud permanent: %w", ns, p.IP, p.MAC, err)
		}
		if _, ok := names[r.LinkIndex]; !ok {
			names[r.LinkIndex] = ""
			if l, err := c.h.LinkByIndex(r.LinkIndex); err == nil {
				names[r.LinkIndex] = l.Attrs().Name
			}
		}
		dev = names[r.LinkIndex]
	}
	return hops, dev, nil
}
