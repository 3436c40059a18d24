package alltoall

// The in-process exchange: one process (the coordinator) holds every pod's
// sockets, each created inside its pod's network namespace (a socket keeps
// the namespace it was made in), and drives the same exchange as the
// agents' Run with a few epoll loops instead of a process and a goroutine
// per connection. A pod costs no process: N is bounded by the sockets
// (one per pair end, N·(N-1)) this process may open, not by N agents'
// memory. One TCP connection per pair of pods carries both directions,
// as an MPI library's TCP transport does.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/sock"
)

// Exchange is one all-to-all exchange run in this process.
type Exchange struct {
	// NetNS is each rank's network namespace as a path (/run/netns/NAME);
	// "" is this process's own.
	NetNS []string
	// Dial is the address rank from dials to reach rank to listening on
	// port in its namespace.
	Dial        func(from, to, port int) (netip.AddrPort, error)
	MessageSize int
	Duration    time.Duration
	// Workers bounds the goroutines that set up the connections (default
	// 4 per CPU); Loops the epoll loops that exchange (default one per CPU).
	Workers, Loops int
	// Started, if set, is called when the connections are made and the
	// rounds begin (the caller's meters start there).
	Started func()
}

// FDsFor is how many descriptors an exchange among n pods holds at once:
// a socket per pair end, a listener per pod while connecting, and a margin
// for the rest of the process.
func FDsFor(n int) uint64 { return uint64(n)*uint64(n-1) + uint64(n) + 256 }

// MaxPodsFor is the largest N whose exchange fits limit descriptors.
func MaxPodsFor(limit uint64) int {
	n := 1
	for FDsFor(n+1) <= limit {
		n++
	}
	return n
}

// ErrTooFewFDs is an exchange that does not fit this process's open-file
// hard limit.
var ErrTooFewFDs = errors.New("not enough file descriptors")

// CheckFDLimit fails, naming the fix, when an exchange among n pods does
// not fit this process's open-file hard limit.
func CheckFDLimit(n int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	return fitFDs(n, lim.Max)
}

func fitFDs(n int, hard uint64) error {
	if need := FDsFor(n); hard < need {
		return fmt.Errorf("%w: all-to-all among %d pods needs %d open files in this process (a socket per pair end), and its open-file hard limit is %d: raise it (`ulimit -Hn %d` as root, LimitNOFILE= for a service) or use at most %d pods",
			ErrTooFewFDs, n, need, hard, need, MaxPodsFor(hard))
	}
	return nil
}

// RaiseFDLimit raises this process's open-file soft limit to the hard
// limit (never above it) when the exchange among n pods needs more, and
// fails naming the fix when even the hard limit is too low.
func RaiseFDLimit(n int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	need := FDsFor(n)
	if lim.Cur >= need {
		return nil
	}
	if err := fitFDs(n, lim.Max); err != nil {
		return err
	}
	lim.Cur = lim.Max
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
}

// Run sets up the connections, exchanges until the duration has passed,
// and returns what every pod's agent would have reported, merged (as
// measure.MergeReports does): Metrics checks it the same way.
func (x Exchange) Run(ctx context.Context) (workload.Report, error) {
	n := len(x.NetNS)
	if n < 2 {
		return workload.Report{}, fmt.Errorf("alltoall: %d pods; need 2 or more", n)
	}
	if x.Workers <= 0 {
		x.Workers = 4 * runtime.NumCPU()
	}
	if x.Loops <= 0 {
		x.Loops = runtime.NumCPU()
	}
	x.Loops = min(x.Loops, n)
	if err := RaiseFDLimit(n); err != nil {
		return workload.Report{}, err
	}
	m := &mesh{n: n, fd: make([][]int, n)}
	for i := range m.fd {
		m.fd[i] = make([]int, n)
		for j := range m.fd[i] {
			m.fd[i][j] = -1
		}
	}
	defer m.close()
	if err := m.connect(ctx, x); err != nil {
		return workload.Report{}, err
	}
	// the exchange's CPU time, as an agent reports its own
	if x.Started != nil {
		x.Started()
	}
	var ru0, ru1 unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	rep, err := m.exchange(ctx, x)
	if unix.Getrusage(unix.RUSAGE_SELF, &ru1) == nil {
		cpu := func(r unix.Rusage) float64 {
			return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e9
		}
		rep.CPUSeconds = cpu(ru1) - cpu(ru0)
	}
	return rep, err
}

// mesh is every pod's sockets: fd[i][j] is pod i's end of the connection
// between i and j.
type mesh struct {
	n  int
	fd [][]int
}

func (m *mesh) close() {
	for _, row := range m.fd {
		for _, fd := range row {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
}

// inNS runs f inside namespace ns ("" is this process's own).
func inNS(ns string, f func() error) error {
	if ns == "" {
		return f()
	}
	return lab.InNetNS(ns, f)
}

// each runs f(0..n-1) on at most w goroutines; the first error stops it.
func each(ctx context.Context, w, n int, f func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(w, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

const setupTimeout = 10 * time.Second

// connect makes one connection per pair: pod i < j dials j's listener,
// sends its rank, and j accepts. The listeners are made first (each in
// its pod's namespace, on a port the kernel picks), then the connections
// to one listener at a time, so that its backlog holds them all.
func (m *mesh) connect(ctx context.Context, x Exchange) error {
	n := m.n
	lfd := make([]int, n)
	ports := make([]int, n)
	for i := range lfd {
		lfd[i] = -1
	}
	defer func() {
		for _, fd := range lfd {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	err := each(ctx, x.Workers, n, func(j int) error {
		return inNS(x.NetNS[j], func() error {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("alltoall: rank %d: listening socket: %w", j, err)
			}
			lfd[j] = fd
			if err := unix.Bind(fd, &unix.SockaddrInet4{}); err != nil {
				return fmt.Errorf("alltoall: rank %d: bind: %w", j, err)
			}
			if err := unix.Listen(fd, n); err != nil {
				return fmt.Errorf("alltoall: rank %d: listen: %w", j, err)
			}
			sa, err := unix.Getsockname(fd)
			if err != nil {
				return err
			}
			ports[j] = sa.(*unix.SockaddrInet4).Port
			return nil
		})
	})
	if err != nil {
		return err
	}
	// every pod's outgoing sockets, made in its namespace in one visit
	err = each(ctx, x.Workers, n, func(i int) error {
		return inNS(x.NetNS[i], func() error {
			for j := i + 1; j < n; j++ {
				fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					return fmt.Errorf("alltoall: rank %d: socket %d of %d: %w", i, j-i, n-1-i, err)
				}
				m.fd[i][j] = fd
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	tv := unix.NsecToTimeval(int64(setupTimeout))
	for j := 1; j < n; j++ {
		err := each(ctx, x.Workers, j, func(i int) error {
			ap, err := x.Dial(i, j, ports[j])
			if err != nil {
				return err
			}
			fd := m.fd[i][j]
			// a blocking connect, bounded (SO_SNDTIMEO bounds connect too)
			if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
				return err
			}
			sa := &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}
			if _, err := sock.Again(func() (int, error) { return 0, unix.Connect(fd, sa) }); err != nil {
				// SO_SNDTIMEO ran out: EINPROGRESS, or EALREADY when the
				// connect was called again after an interruption
				if errors.Is(err, unix.EINPROGRESS) || errors.Is(err, unix.EALREADY) {
					err = fmt.Errorf("no answer within %v", setupTimeout)
				}
				return fmt.Errorf("alltoall: rank %d cannot reach rank %d at %s: %w", i, j, ap, err)
			}
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(i))
			if _, err := sock.Again(func() (int, error) { return unix.Write(fd, hdr[:]) }); err != nil {
				return fmt.Errorf("alltoall: rank %d to rank %d: %w", i, j, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := unix.SetsockoptTimeval(lfd[j], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return err
		}
		for range j {
			fd, err := sock.Again(func() (int, error) {
				fd, _, err := unix.Accept4(lfd[j], unix.SOCK_CLOEXEC)
				return fd, err
			})
			if err != nil {
				return fmt.Errorf("alltoall: rank %d accepting: %w", j, err)
			}
			if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				unix.Close(fd)
				return err
			}
			var hdr [4]byte
			if k, err := sock.Again(func() (int, error) { return unix.Read(fd, hdr[:]) }); err != nil || k != 4 {
				unix.Close(fd)
				return fmt.Errorf("alltoall: rank %d: a peer's rank: read %d bytes: %v", j, k, err)
			}
			from := int(binary.BigEndian.Uint32(hdr[:]))
			if from < 0 || from >= j || m.fd[j][from] >= 0 {
				unix.Close(fd)
				return fmt.Errorf("alltoall: rank %d: a peer says it is rank %d", j, from)
			}
			m.fd[j][from] = fd
		}
		unix.Close(lfd[j])
		lfd[j] = -1
	}
	for i, row := range m.fd {
		for j, fd := range row {
			if i == j {
				continue
			}
			// as Go's net package does for the agents' connections
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
				return err
			}
			if err := unix.SetNonblock(fd, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// end is one pod's end of a connection.
type end struct {
	pod, peer int
	fd        int
	idx       int   // its index in the loop's ends (epoll's data)
	got       int64 // whole messages received from peer
	rOff      int   // bytes of the message being received
	pending   int   // messages queued but not yet written whole
	wOff      int   // bytes of the head message written
	flagAt    int64 // which queued message (by sent count) carries the last-round mark, 0 none
	sent      int64 // messages written whole
	out       bool  // EPOLLOUT is on
}

// pod is one rank's state in its loop.
type pod struct {
	rank    int
	ends    []*end // by peer (nil for itself)
	round   int64
	missing int   // peers whose message of round has not come yet
	last    int64 // the round rank 0 marked as the last (0: not yet)
	start   time.Time
	t0      time.Time
	done    bool
	bytes   int64
}

func (m *mesh) exchange(ctx context.Context, x Exchange) (workload.Report, error) {
	type loopOut struct {
		h    *hist.H
		err  error
		pods []*pod
	}
	outs := make([]loopOut, x.Loops)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for l := range x.Loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, pods, err := m.loop(ctx, x, l)
			if err != nil {
				cancel() // the others would wait for this loop's pods forever
			}
			outs[l] = loopOut{h: h, err: err, pods: pods}
		}()
	}
	wg.Wait()
	var rep workload.Report
	h := hist.New()
	var sent int64
	for _, o := range outs {
		if o.err != nil && !errors.Is(o.err, context.Canceled) {
			return rep, o.err
		}
	}
	for _, o := range outs {
		if o.err != nil {
			return rep, o.err
		}
		h.Merge(o.h)
		for _, p := range o.pods {
			rep.Transactions += p.round
			for _, e := range p.ends {
				if e != nil {
					rep.Messages += e.got
					sent += e.sent
				}
			}
			rep.Bytes += p.bytes
		}
	}
	for _, o := range outs {
		for _, p := range o.pods {
			rep.Seconds = max(rep.Seconds, p.t0.Sub(p.start).Seconds())
		}
	}
	rep.Extra = map[string]float64{ExtraSent: float64(sent)}
	var err error
	rep.Histogram, err = h.Encode()
	return rep, err
}

// loop drives the pods l, l+Loops, l+2·Loops... to the last round.
func (m *mesh) loop(ctx context.Context, x Exchange, l int) (*hist.H, []*pod, error) {
	n, size := m.n, x.MessageSize
	h := hist.New()
	efd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return h, nil, err
	}
	defer unix.Close(efd)
	var pods []*pod
	var ends []*end // by the index epoll hands back
	for r := l; r < n; r += x.Loops {
		p := &pod{rank: r, ends: make([]*end, n)}
		for j := range n {
			if j == r {
				continue
			}
			e := &end{pod: len(pods), peer: j, fd: m.fd[r][j], idx: len(ends)}
			p.ends[j] = e
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(len(ends))}
			if err := unix.EpollCtl(efd, unix.EPOLL_CTL_ADD, e.fd, &ev); err != nil {
				return h, nil, err
			}
			ends = append(ends, e)
		}
		pods = append(pods, p)
	}
	msg := make([]byte, size)
	flagged := make([]byte, size)
	flagged[0] = 1
	buf := make([]byte, max(64<<10, size))
	active, queued := len(pods), 0 // pods not done, ends with messages queued
	setOut := func(e *end, on bool) error {
		if e.out == on {
			return nil
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(e.idx)}
		if on {
			ev.Events |= unix.EPOLLOUT
		}
		e.out = on
		return unix.EpollCtl(efd, unix.EPOLL_CTL_MOD, e.fd, &ev)
	}
	// flush writes what e has queued until the socket is full, and has
	// epoll say when it has room again if it is.
	flush := func(e *end) error {
		was := e.pending > 0
		for e.pending > 0 {
			b := msg
			if e.flagAt == e.sent+1 {
				b = flagged
			}
			k, err := unix.Write(e.fd, b[e.wOff:])
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			if err != nil {
				return fmt.Errorf("alltoall: rank %d sending to rank %d: %w", pods[e.pod].rank, e.peer, err)
			}
			e.wOff += k
			if e.wOff == size {
				e.wOff = 0
				e.pending--
				e.sent++
			}
		}
		switch now := e.pending > 0; {
		case now && !was:
			queued++
		case !now && was:
			queued--
		}
		return setOut(e, e.pending > 0)
	}
	// begin starts p's next round: a message to every peer.
	begin := func(p *pod) error {
		p.round++
		p.t0 = time.Now()
		if p.round == 2 {
			p.start = p.t0 // round 1 waits for the slowest pod to start: not timed
		}
		final := p.rank == 0 && p.round > 1 && p.t0.Sub(p.start) >= x.Duration
		p.missing = 0
		for _, e := range p.ends {
			if e == nil {
				continue
			}
			if e.pending == 0 {
				e.pending++
				queued++ // flush counts it out when written
			} else {
				e.pending++
			}
			if final {
				e.flagAt = e.sent + int64(e.pending)
			}
			if err := flush(e); err != nil {
				return err
			}
			if e.got < p.round {
				p.missing++
			}
		}
		if final {
			p.last = p.round
		}
		return nil
	}
	// complete ends p's round when nothing is missing, and begins the next
	// unless it was the last.
	complete := func(p *pod) error {
		for p.missing == 0 && !p.done {
			if p.round > 1 {
				h.Record(time.Since(p.t0))
			}
			if p.last == p.round {
				p.done = true
				active--
				p.t0 = time.Now() // the end of its timed window
				return nil
			}
			if err := begin(p); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range pods {
		if err := begin(p); err != nil {
			return h, pods, err
		}
	}
	deadline := time.Now().Add(x.Duration + ConnectTimeout + 30*time.Second)
	events := make([]unix.EpollEvent, 256)
	for {
		if active == 0 && queued == 0 {
			return h, pods, nil
		}
		if err := ctx.Err(); err != nil {
			return h, pods, err
		}
		if time.Now().After(deadline) {
			return h, pods, fmt.Errorf("alltoall: rounds still running after %v", x.Duration+ConnectTimeout+30*time.Second)
		}
		k, err := unix.EpollWait(efd, events, 100)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return h, pods, err
		}
		for _, ev := range events[:k] {
			e := ends[int(ev.Fd)]
			p := pods[e.pod]
			if ev.Events&unix.EPOLLOUT != 0 {
				if err := flush(e); err != nil {
					return h, pods, err
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
				continue
			}
			r, err := unix.Read(e.fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				continue
			}
			if err != nil || r == 0 {
				if ctx.Err() != nil {
					return h, pods, ctx.Err()
				}
				return h, pods, fmt.Errorf("alltoall: rank %d from rank %d: connection closed (%v)", p.rank, e.peer, err)
			}
			p.bytes += int64(r)
			for off := 0; off < r; {
				if e.rOff == 0 && e.peer == 0 && buf[off] == 1 && p.last == 0 {
					p.last = e.got + 1
				}
				take := min(size-e.rOff, r-off)
				off += take
				e.rOff += take
				if e.rOff == size {
					e.rOff = 0
					e.got++
					if e.got == p.round {
						p.missing--
					}
				}
			}
			if err := complete(p); err != nil {
				return h, pods, err
			}
		}
	}
}
