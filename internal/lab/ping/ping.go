// Package ping sends ICMP echo requests from inside a network namespace
// through a raw socket the coordinator opens there: no ping process per
// probe. FirstReply waits for one peer to answer (a new pod's first
// packet); Sweep checks many peers at once (every pod of a lab reachable).
package ping

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
)

// ids tells apart the probes of one process: each socket's requests carry
// an identifier of their own, so that two probes in one namespace never
// take each other's replies.
var ids atomic.Uint32

func nextID() uint16 { return uint16(os.Getpid()*31) + uint16(ids.Add(1)) }

// FirstReply sends ICMP echo requests to dst from inside namespace ns every
// 5 ms until one is answered, and returns when the reply arrived.
func FirstReply(ctx context.Context, ns string, dst netip.Addr, limit time.Duration) (time.Time, error) {
	fd, err := lab.SocketIn(ns, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return time.Time{}, fmt.Errorf("probe socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	id := nextID()
	sa := &unix.SockaddrInet4{Addr: dst.As4()}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(limit)
	for seq := uint16(1); ; seq++ {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("no reply from %s within %v of the pod's creation", dst, limit)
		}
		_ = unix.Sendto(fd, EchoRequest(id, seq), 0, sa) // unreachable yet is the point
		wait := time.Now().Add(5 * time.Millisecond)
		for {
			left := time.Until(wait)
			if left <= 0 {
				break
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, _ := unix.Poll(pfd, int(left/time.Millisecond)+1); k <= 0 {
				continue
			}
			n, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
			if err != nil {
				continue
			}
			if f, ok := from.(*unix.SockaddrInet4); ok && f.Addr == sa.Addr && IsEchoReply(buf[:n], id) {
				return time.Now(), nil
			}
		}
	}
}

// Sweep pings every target from inside namespace ns through one raw
// socket, asking again every interval those that have not answered,
// until all have or limit has passed. It returns when each answered
// first; the error names those that never did.
func Sweep(ctx context.Context, ns string, targets []netip.Addr, interval, limit time.Duration) (map[netip.Addr]time.Time, error) {
	fd, err := lab.SocketIn(ns, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return nil, fmt.Errorf("probe socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	// a thousand replies at once must not overflow the socket
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	id := nextID()
	waiting := map[[4]byte]netip.Addr{}
	for _, t := range targets {
		waiting[t.As4()] = t
	}
	got := make(map[netip.Addr]time.Time, len(targets))
	buf := make([]byte, 1500)
	deadline := time.Now().Add(limit)
	for seq := uint16(1); len(waiting) > 0; seq++ {
		if err := ctx.Err(); err != nil {
			return got, err
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("no reply from %d of %d addresses within %v from %s: %s", len(waiting), len(targets), limit, ns, sample(waiting))
		}
		req := EchoRequest(id, seq)
		for a := range waiting {
			_ = unix.Sendto(fd, req, 0, &unix.SockaddrInet4{Addr: a})
		}
		until := time.Now().Add(interval)
		for len(waiting) > 0 {
			left := time.Until(until)
			if left <= 0 {
				break
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, _ := unix.Poll(pfd, int(left/time.Millisecond)+1); k <= 0 {
				continue
			}
			for {
				n, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
				if err != nil {
					break
				}
				f, ok := from.(*unix.SockaddrInet4)
				if !ok || !IsEchoReply(buf[:n], id) {
					continue
				}
				if a, ok := waiting[f.Addr]; ok {
					got[a] = time.Now()
					delete(waiting, f.Addr)
				}
			}
		}
	}
	return got, nil
}

// sample names a few of the addresses that did not answer.
func sample(m map[[4]byte]netip.Addr) string {
	var s []string
	for _, a := range m {
		s = append(s, a.String())
	}
	sort.Strings(s)
	if len(s) > 5 {
		s = append(s[:5], "...")
	}
	return strings.Join(s, " ")
}

// EchoRequest builds an ICMP echo request (type 8) with an 8-byte payload.
func EchoRequest(id, seq uint16) []byte {
	b := make([]byte, 16)
	b[0] = 8
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], "cnperf!!")
	binary.BigEndian.PutUint16(b[2:], Checksum(b))
	return b
}

// Checksum is the Internet checksum of b.
func Checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// IsEchoReply reports whether pkt (an IPv4 packet as a raw socket returns
// it) is an echo reply (type 0) to identifier id.
func IsEchoReply(pkt []byte, id uint16) bool {
	if len(pkt) < 20 {
		return false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if len(pkt) < ihl+8 {
		return false
	}
	icmp := pkt[ihl:]
	return icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == id
}
