package labbackend

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/netmode"
)

// startupProbeLimit bounds the wait for a new pod's first reply.
const startupProbeLimit = 15 * time.Second

// StartPod implements backend.PodStarter: it creates a pod with no network
// (a namespace with loopback: the reference the paper compares with), then
// a pod on this network on the host of pod near, and times the latter from
// the create call to the first ICMP echo reply from pod peer ("" for none:
// then the figure is the pod's creation alone).
func (d *Deployment) StartPod(ctx context.Context, near, peer, name string) (backend.StartupSample, error) {
	var s backend.StartupSample
	np := d.pods[near]
	if np == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	h := np.lp.Host
	l := d.Lab
	t := time.Now()
	if _, err := l.NewPodNS(ctx, h, "n"+name); err != nil {
		return s, fmt.Errorf("pod with no network: %w", err)
	}
	s.Bare = time.Since(t)

	var marks []phaseMark
	pctx := netmode.WithPhases(ctx, func(phase string, at time.Time) {
		marks = append(marks, phaseMark{phase, at})
	})
	t0 := time.Now()
	pod, err := d.Mode.AddPod(pctx, l, h, "u"+name)
	added := time.Now()
	if err != nil {
		return s, fmt.Errorf("creating pod: %w", err)
	}
	var first time.Time
	if pp := d.pods[peer]; peer != "" && pp != nil {
		addr, err := d.Mode.Expose(ctx, l, pod, pp.lp, "udp", 5201)
		if err != nil {
			return s, err
		}
		s.Path = addr.Addr().String()
		if first, err = firstReply(ctx, pod.NetNS, addr.Addr(), startupProbeLimit); err != nil {
			return s, err
		}
	} else {
		s.NoPeer = true
	}
	end := added
	if !first.IsZero() {
		end = first
	}
	s.Total = end.Sub(t0)
	s.Phases = splitPhases(t0, added, first, marks)
	return s, nil
}

// SetupPhases implements backend.PodStarter: node-level phases the mode's
// Setup went through once (calico-bgp: BGP sessions established).
func (d *Deployment) SetupPhases() map[string]time.Duration {
	if sp, ok := d.Mode.(netmode.SetupPhaser); ok {
		return sp.SetupPhases(d.Lab)
	}
	return nil
}

// phaseMark is one netmode.MarkPhase call.
type phaseMark struct {
	phase string
	at    time.Time
}

var standardPhases = []string{netmode.PhaseNamespace, netmode.PhaseLinks, netmode.PhaseControlPlane}

// splitPhases turns the marks of one AddPod (started at t0, returned at
// added) and the first reply (at first, zero when there is no peer) into
// the time of each phase. Time after the last mark belongs to the standard
// phase that follows it: a mode that marks nothing spends it all in
// "links", one that marks only "namespace" spends the rest in "links"; a
// remainder under 100us stays with the last marked phase.
func splitPhases(t0, added, first time.Time, marks []phaseMark) map[string]time.Duration {
	out := map[string]time.Duration{}
	prev := t0
	next := 1 // index in standardPhases of the phase the remainder goes to
	for _, m := range marks {
		out[m.phase] += m.at.Sub(prev)
		prev = m.at
		switch m.phase {
		case netmode.PhaseNamespace:
			next = 1
		case netmode.PhaseLinks:
			next = 2
		default:
			next = 2 // control-plane steps a mode names itself
		}
	}
	// a remainder of a few microseconds is AddPod returning, not a phase
	switch rest := added.Sub(prev); {
	case len(marks) == 0 || rest >= 100*time.Microsecond:
		out[standardPhases[next]] += rest
	case rest > 0:
		out[marks[len(marks)-1].phase] += rest
	}
	if !first.IsZero() {
		out[netmode.PhaseFirstPacket] = first.Sub(added)
	}
	return out
}

// FirstReply is firstReply for other backends: ns is a network namespace
// file's path (/proc/PID/ns/net) or a name under /run/netns.
func FirstReply(ctx context.Context, ns string, dst netip.Addr, limit time.Duration) (time.Time, error) {
	return firstReply(ctx, ns, dst, limit)
}

// firstReply sends ICMP echo requests to dst from inside namespace ns every
// 5 ms until one is answered, and returns when the reply arrived.
func firstReply(ctx context.Context, ns string, dst netip.Addr, limit time.Duration) (time.Time, error) {
	fd, err := socketIn(ns, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return time.Time{}, fmt.Errorf("probe socket in %s: %w", ns, err)
	}
	defer unix.Close(fd)
	id := uint16(os.Getpid())
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
		_ = unix.Sendto(fd, echoRequest(id, seq), 0, sa) // unreachable yet is the point
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
			if f, ok := from.(*unix.SockaddrInet4); ok && f.Addr == sa.Addr && isEchoReply(buf[:n], id) {
				return time.Now(), nil
			}
		}
	}
}

// echoRequest builds an ICMP echo request (type 8) with an 8-byte payload.
func echoRequest(id, seq uint16) []byte {
	b := make([]byte, 16)
	b[0] = 8
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	copy(b[8:], "cnperf!!")
	binary.BigEndian.PutUint16(b[2:], icmpChecksum(b))
	return b
}

func icmpChecksum(b []byte) uint16 {
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

// isEchoReply reports whether pkt (an IPv4 packet as a raw socket returns
// it) is an echo reply (type 0) to identifier id.
func isEchoReply(pkt []byte, id uint16) bool {
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

// socketIn opens a socket inside network namespace ns: the calling thread
// enters ns, makes the socket, and returns to its own namespace (a socket
// stays in the namespace it was made in). The thread is locked throughout
// and, should returning fail, never unlocked, so Go retires it.
func socketIn(ns string, domain, typ, proto int) (int, error) {
	runtime.LockOSThread()
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(orig)
	path := ns
	if !strings.HasPrefix(ns, "/") {
		path = "/run/netns/" + ns
	}
	target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return -1, err
	}
	fd, serr := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
		return -1, fmt.Errorf("returning from %s: %w", ns, err) // thread stays locked and dies
	}
	runtime.UnlockOSThread()
	return fd, serr
}
