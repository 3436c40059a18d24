// Package tund is the user-space datapath of cnperf's user-space overlays,
// run as the hidden `cnperf tund` command inside a lab host's namespace:
// it moves packets between a TUN or TAP device and a UDP socket, so every
// packet crosses the user/kernel boundary twice on each host, as Flannel's
// udp backend (flanneld with flannel0, UDP 8285) and Weave's sleeve router
// (frames captured off the weave bridge, UDP 6784) do.
//
// In L3 mode (flannel) it routes by destination address: a table of pod
// subnet -> peer host, given statically or followed from Flannel's subnet
// leases in etcd. In L2 mode (weave) it switches Ethernet frames: it learns
// which peer each source MAC lives behind and floods unknown and broadcast
// frames to every peer. Either mode can seal each datagram with AES-GCM
// (a 12-byte nonce and 16-byte tag per packet), Weave's encrypted tunnel.
package tund

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/ctrlplane/etcd"
)

// Encryption overhead per datagram.
const (
	NonceSize = 12
	TagSize   = 16
	Overhead  = NonceSize + TagSize
)

// Config is one daemon's job.
type Config struct {
	Dev      string                          // TUN (L3) or TAP (L2) device, already created
	L2       bool                            // switch Ethernet frames (weave) instead of routing packets (flannel)
	Listen   netip.AddrPort                  // UDP address to receive on
	Peers    []netip.AddrPort                // L2: every other router
	Routes   map[netip.Prefix]netip.AddrPort // L3: static routes
	Etcd     string                          // L3: follow leases from this etcd (http://IP:2379)
	Prefix   string                          // L3: lease key prefix
	PeerPort int                             // L3: UDP port of peers found in leases
	Password string                          // non-empty: seal datagrams with AES-GCM under sha256(password)
	SockBuf  int                             // UDP socket buffers in bytes (0: the kernel's default)
	Log      io.Writer
}

type route struct {
	net  netip.Prefix
	peer netip.AddrPort
}

// Daemon is a running tunnel.
type Daemon struct {
	cfg    Config
	tun    int
	conn   *net.UDPConn
	aead   cipher.AEAD
	salt   uint32
	seq    atomic.Uint64
	routes atomic.Pointer[[]route]
	macMu  sync.RWMutex
	macs   map[[6]byte]netip.AddrPort

	// counters
	TunIn, TunOut, UDPIn, UDPOut, Drops atomic.Uint64
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	d, err := newDaemon(cfg)
	if err != nil {
		return err
	}
	fd, err := openTun(cfg.Dev, cfg.L2)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return d.serve(ctx, fd)
}

func newDaemon(cfg Config) (*Daemon, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	d := &Daemon{cfg: cfg, macs: map[[6]byte]netip.AddrPort{}}
	empty := []route{}
	d.routes.Store(&empty)
	if cfg.Password != "" {
		key := sha256.Sum256([]byte(cfg.Password))
		blk, err := aes.NewCipher(key[:])
		if err != nil {
			return nil, err
		}
		if d.aead, err = cipher.NewGCM(blk); err != nil {
			return nil, err
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		d.salt = binary.BigEndian.Uint32(b[:])
	}
	return d, nil
}

// serve runs the daemon over tun, an open TUN/TAP descriptor (tests pass
// one end of a datagram socket pair).
func (d *Daemon) serve(ctx context.Context, tun int) (err error) {
	cfg := d.cfg
	d.tun = tun
	d.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(cfg.Listen))
	if err != nil {
		return fmt.Errorf("tund: %w", err)
	}
	defer d.conn.Close()
	if cfg.SockBuf > 0 {
		_ = d.conn.SetReadBuffer(cfg.SockBuf)
		_ = d.conn.SetWriteBuffer(cfg.SockBuf)
	}
	if len(cfg.Routes) > 0 {
		rs := make([]route, 0, len(cfg.Routes))
		for n, p := range cfg.Routes {
			rs = append(rs, route{n.Masked(), p})
		}
		d.routes.Store(&rs)
	}
	fmt.Fprintf(cfg.Log, "ready dev=%s l2=%v listen=%s encrypt=%v\n", cfg.Dev, cfg.L2, cfg.Listen, d.aead != nil)
	if !cfg.L2 {
		fmt.Fprintf(cfg.Log, "routes=%d\n", len(*d.routes.Load()))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Etcd != "" {
		c := &etcd.Client{URL: cfg.Etcd}
		go c.Follow(ctx, cfg.Prefix, d.setLeases)
	}
	tunDone, udpDone := make(chan error, 1), make(chan error, 1)
	go func() { tunDone <- d.fromTun() }()
	go func() { udpDone <- d.fromUDP() }()
	tunOpen, udpOpen := true, true
	select {
	case <-ctx.Done():
	case err = <-tunDone:
		tunOpen = false
	case err = <-udpDone:
		udpOpen = false
	}
	d.conn.Close() // ends the UDP reader
	if udpOpen {
		<-udpDone
	}
	// Wake the TUN reader before the caller closes the descriptor under
	// it: a socket (a test's stand-in for the device) shuts down and the
	// reader returns. A real TUN device cannot be woken this way; its
	// reader ends with the process (`cnperf tund` exits right after).
	if tunOpen && unix.Shutdown(d.tun, unix.SHUT_RDWR) == nil {
		<-tunDone
	}
	fmt.Fprintf(cfg.Log, "stats tun_in=%d udp_out=%d udp_in=%d tun_out=%d drops=%d\n",
		d.TunIn.Load(), d.UDPOut.Load(), d.UDPIn.Load(), d.TunOut.Load(), d.Drops.Load())
	return err
}

// Lease is the part of a Flannel subnet lease the daemon needs.
type Lease struct {
	PublicIP string `json:"PublicIP"`
}

// LeaseSubnet parses a lease key ".../10.244.2.0-24" into its subnet.
func LeaseSubnet(key string) (netip.Prefix, error) {
	i := strings.LastIndexByte(key, '/')
	return netip.ParsePrefix(strings.Replace(key[i+1:], "-", "/", 1))
}

// setLeases replaces the routing table with the leases of other hosts.
func (d *Daemon) setLeases(kvs []etcd.KV) {
	var rs []route
	for _, kv := range kvs {
		n, err := LeaseSubnet(kv.Key)
		if err != nil {
			continue
		}
		var l Lease
		if json.Unmarshal([]byte(kv.Value), &l) != nil {
			continue
		}
		ip, err := netip.ParseAddr(l.PublicIP)
		if err != nil || ip == d.cfg.Listen.Addr() {
			continue
		}
		rs = append(rs, route{n.Masked(), netip.AddrPortFrom(ip, uint16(d.cfg.PeerPort))})
	}
	d.routes.Store(&rs)
	fmt.Fprintf(d.cfg.Log, "routes=%d\n", len(rs))
}

func (d *Daemon) lookup(dst netip.Addr) (netip.AddrPort, bool) {
	best, bits := netip.AddrPort{}, -1
	for _, r := range *d.routes.Load() {
		if r.net.Bits() > bits && r.net.Contains(dst) {
			best, bits = r.peer, r.net.Bits()
		}
	}
	return best, bits >= 0
}

// fromTun reads what the kernel routed into the device and sends it to the
// peer behind its destination.
func (d *Daemon) fromTun() error {
	buf := make([]byte, NonceSize+65536+TagSize)
	keep := make([]byte, 65536)
	for {
		n, err := unix.Read(d.tun, buf[NonceSize:NonceSize+65536])
		if err != nil {
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			return fmt.Errorf("tund: reading %s: %w", d.cfg.Dev, err)
		}
		if n == 0 {
			return nil // the device (a test's socket) was shut down
		}
		d.TunIn.Add(1)
		pkt := buf[NonceSize : NonceSize+n]
		if d.cfg.L2 {
			if n < 14 {
				d.Drops.Add(1)
				continue
			}
			var dst [6]byte
			copy(dst[:], pkt[0:6])
			d.macMu.RLock()
			peer, ok := d.macs[dst]
			d.macMu.RUnlock()
			if ok && dst[0]&1 == 0 {
				d.send(buf, n, peer, nil)
				continue
			}
			for _, p := range d.cfg.Peers { // flood: broadcast, multicast, unknown
				d.send(buf, n, p, keep[:n])
			}
			continue
		}
		if n < 20 || pkt[0]>>4 != 4 {
			d.Drops.Add(1)
			continue
		}
		peer, ok := d.lookup(netip.AddrFrom4([4]byte(pkt[16:20])))
		if !ok {
			d.Drops.Add(1)
			continue
		}
		d.send(buf, n, peer, nil)
	}
}

// send transmits buf[NonceSize:NonceSize+n], sealed in place when
// encrypting, which keeps the hot path free of allocation. When flooding
// (keep set) the plaintext is restored for the next peer, each copy sealed
// under a fresh nonce.
func (d *Daemon) send(buf []byte, n int, peer netip.AddrPort, keep []byte) {
	out := buf[NonceSize : NonceSize+n]
	if d.aead != nil {
		if keep != nil {
			copy(keep, out)
		}
		nonce := buf[:NonceSize]
		binary.BigEndian.PutUint32(nonce[0:4], d.salt)
		binary.BigEndian.PutUint64(nonce[4:12], d.seq.Add(1))
		sealed := d.aead.Seal(out[:0], nonce, out, nil)
		out = buf[:NonceSize+len(sealed)]
	}
	_, err := d.conn.WriteToUDPAddrPort(out, peer)
	if keep != nil && d.aead != nil {
		copy(buf[NonceSize:], keep[:n])
	}
	if err != nil {
		d.Drops.Add(1)
		return
	}
	d.UDPOut.Add(1)
}

// fromUDP receives peers' datagrams and hands them to the kernel.
func (d *Daemon) fromUDP() error {
	buf := make([]byte, 65536+Overhead)
	for {
		n, from, err := d.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("tund: receiving: %w", err)
		}
		d.UDPIn.Add(1)
		pkt := buf[:n]
		if d.aead != nil {
			if n < Overhead {
				d.Drops.Add(1)
				continue
			}
			pkt, err = d.aead.Open(buf[NonceSize:NonceSize], buf[:NonceSize], buf[NonceSize:n], nil)
			if err != nil {
				d.Drops.Add(1) // forged, corrupted or under another password
				continue
			}
		}
		if d.cfg.L2 && len(pkt) >= 14 {
			var src [6]byte
			copy(src[:], pkt[6:12])
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			d.macMu.RLock()
			known := d.macs[src] == from
			d.macMu.RUnlock()
			if !known {
				d.macMu.Lock()
				d.macs[src] = from
				d.macMu.Unlock()
			}
		}
		if _, err := unix.Write(d.tun, pkt); err != nil {
			d.Drops.Add(1)
			continue
		}
		d.TunOut.Add(1)
	}
}

// openTun attaches to the TUN (or TAP) device name, which the lab created
// persistent with `ip tuntap add`, without packet information headers.
func openTun(name string, tap bool) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("tund: opening /dev/net/tun: %w (needs CONFIG_TUN)", err)
	}
	var ifr [unix.IFNAMSIZ + 64]byte
	copy(ifr[:unix.IFNAMSIZ-1], name)
	flags := uint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if tap {
		flags = unix.IFF_TAP | unix.IFF_NO_PI
	}
	binary.NativeEndian.PutUint16(ifr[unix.IFNAMSIZ:], flags)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.TUNSETIFF), uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
		unix.Close(fd)
		return -1, fmt.Errorf("tund: attaching to %s: %w", name, errno)
	}
	return fd, nil
}

// Flags registers `cnperf tund`'s flags on fs and returns the function
// that makes the daemon's Config of them once they are parsed.
func Flags(fs *flag.FlagSet) func() (Config, error) {
	cfg := Config{Routes: map[netip.Prefix]netip.AddrPort{}}
	addr := func(to *netip.AddrPort) func(string) error {
		return func(v string) (err error) {
			if *to, err = netip.ParseAddrPort(v); err != nil {
				return fmt.Errorf("%v; use IP:PORT such as 10.100.0.1:8285", err)
			}
			return nil
		}
	}
	fs.StringVar(&cfg.Dev, "dev", "", "the TUN (L3) or TAP (L2) device, already created")
	fs.BoolVar(&cfg.L2, "l2", false, "switch Ethernet frames (weave) instead of routing packets (flannel)")
	fs.Func("listen", "the UDP `IP:PORT` to receive on", addr(&cfg.Listen))
	fs.Func("peer", "L2: another router's UDP `IP:PORT` (repeatable)", func(v string) error {
		var p netip.AddrPort
		err := addr(&p)(v)
		cfg.Peers = append(cfg.Peers, p)
		return err
	})
	fs.Func("route", "L3: a static route `SUBNET=IP:PORT` (repeatable)", func(v string) error {
		n, via, ok := strings.Cut(v, "=")
		if !ok {
			return errors.New("use SUBNET=IP:PORT")
		}
		p, err := netip.ParsePrefix(n)
		if err != nil {
			return fmt.Errorf("%v; use SUBNET=IP:PORT", err)
		}
		a, err := netip.ParseAddrPort(via)
		cfg.Routes[p] = a
		return err
	})
	fs.StringVar(&cfg.Etcd, "etcd", "", "L3: follow Flannel's subnet leases in this etcd (`URL`, http://IP:2379)")
	fs.StringVar(&cfg.Prefix, "prefix", "", "L3, with --etcd: the lease key prefix")
	fs.IntVar(&cfg.PeerPort, "peer-port", 0, "L3, with --etcd: the UDP port of the peers found in leases")
	fs.IntVar(&cfg.SockBuf, "sockbuf", 0, "UDP socket buffers in bytes (0: the kernel's default)")
	// the lab's state folder: unused, but it names the lab on the command
	// line, so leak checks and cnperf clean can tell whose daemon this is
	fs.String("state", "", "the lab's state folder (names the lab on the command line; unused)")
	fs.Func("password-file", "seal datagrams with AES-GCM under the password in this `FILE`", func(v string) error {
		b, err := os.ReadFile(v)
		cfg.Password = strings.TrimSpace(string(b))
		return err
	})
	return func() (Config, error) {
		if cfg.Dev == "" || !cfg.Listen.IsValid() {
			return cfg, errors.New("tund needs --dev and --listen; give both (cnperf starts tund itself, see docs/networks.md)")
		}
		if cfg.Etcd != "" && (cfg.Prefix == "" || cfg.PeerPort == 0) {
			return cfg, errors.New("tund: --etcd needs --prefix and --peer-port")
		}
		return cfg, nil
	}
}

// ParseArgs reads `cnperf tund` flags.
func ParseArgs(args []string) (Config, error) {
	fs := cli.NewFlagSet("cnperf tund")
	config := Flags(fs)
	if _, err := cli.Parse(fs, args, "cnperf tund"); err != nil {
		return Config{}, err
	}
	return config()
}

// Binary is the cnperf program that has the `tund` command; empty means this
// very program (os.Executable). Tests that run modes from a test binary set
// it to a built cnperf.
var Binary string

// Command is the command line that starts a daemon: cnperf tund.
func Command() ([]string, error) {
	if Binary != "" {
		return []string{Binary, "tund"}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the cnperf binary for tund: %w", err)
	}
	return []string{self, "tund"}, nil
}
