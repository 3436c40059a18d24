package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/cnperf/cnperf/internal/hist"
	"golang.org/x/sys/unix"
)

// Config is one load run.
type Config struct {
	Addr     netip.AddrPort
	Protocol Protocol
	// Request is sent as is for every request (HTTP: the whole request;
	// Raw: the message).
	Request []byte
	// ResponseSize is the size of a Raw response.
	ResponseSize int
	// Rate is the target in requests per second; 0 runs closed loop.
	Rate     uint64
	Duration time.Duration
	// Connections are opened before the run and spread over Threads
	// worker threads (each with its own epoll set and histograms).
	Connections int
	Threads     int
	// KeepAlive false opens a new connection per request (closed loop only).
	KeepAlive bool
	// Drain bounds how long requests still owed at the end of the window
	// may take to be sent and answered (open loop); default 2s.
	Drain time.Duration
	// MaxSendLag is the send-lag p99 above which an open-loop step is
	// saturated; default 1ms.
	MaxSendLag time.Duration
	// Spin is how close to a send the worker stops sleeping and polls, to
	// send within microseconds of the intended time; default 50µs.
	Spin time.Duration
	// Poll is how long after a send the worker polls for the response
	// instead of sleeping (open loop); 0 sleeps at once. A sleeping thread
	// pays its CPU's wake-up on every response: on loopback across two
	// CPUs, under a PM QoS bound of 0, 29 µs median round trip sleeping
	// against 20 µs polling 200µs (docs/perf.md). Polling keeps the
	// client's CPU busy, which also steers the kernel's wake-ups of a
	// server on the same machine to the other CPU.
	Poll time.Duration
	// Realtime runs the worker threads under SCHED_FIFO (priority 1), so
	// that a wake-up for a send is not queued behind other processes' time
	// slices. Needs root (CAP_SYS_NICE). The spin before each send is then
	// what keeps the lag low, and it is capped at a quarter of a worker's
	// send interval so a real-time worker leaves most of its CPU to others.
	Realtime bool
	// Pace runs the open-loop schedule with no I/O at all: each request is
	// "answered" the moment it is sent, so the send lag is what the
	// platform alone allows a paced thread (scheduling, interrupts, a
	// virtual CPU's stolen time). It is the floor under any open-loop
	// result on the same CPUs; Addr and Request are not used.
	Pace bool
}

// Result is what a run measured.
type Result struct {
	Target    uint64  // requests/s asked (0: closed loop)
	Seconds   float64 // the measured window
	Scheduled int64   // requests due in the window (open loop)
	Completed int64   // responses received (for requests due in the window)
	Errors    int64   // failed requests (connection errors, non-2xx, bad framing)
	Unsent    int64   // requests due but never sent before the drain ended
	Timeouts  int64   // requests sent but not answered before the drain ended
	Connects  int64   // connections opened, initial ones included
	// Workers is how many worker threads ran (summed when merged).
	Workers int64
	// ConnsBusy is, summed over workers, how long every connection of a
	// worker was in use while a request was due (open loop): the time
	// requests waited for the server rather than for the client thread.
	ConnsBusy time.Duration
	// Latency is corrected (from the intended send time) in open loop and
	// the plain request-to-response time in closed loop.
	Latency *hist.H
	// Uncorrected is the time from the actual send to the response.
	Uncorrected *hist.H
	// SendLag is how late each request left, against its intended time.
	SendLag *hist.H
}

// Achieved is the rate of answered requests over the window.
func (r *Result) Achieved() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Completed) / r.Seconds
}

// SaturatedBelow is the fraction of the target an open-loop step must
// achieve to count as a valid latency measurement.
const SaturatedBelow = 0.99

// Saturated says whether an open-loop step failed to hold its target, and
// why: under 99% of the target answered, or the send lag p99 over bound.
func (r *Result) Saturated(maxLag time.Duration) (bool, string) {
	if r.Target == 0 {
		return false, ""
	}
	if a := r.Achieved(); a < SaturatedBelow*float64(r.Target) {
		return true, fmt.Sprintf("achieved %.0f/s of %d/s", a, r.Target)
	}
	if maxLag > 0 && r.SendLag.Count() > 0 && r.SendLag.Quantile(99) > maxLag {
		return true, fmt.Sprintf("send lag p99 %v over %v", r.SendLag.Quantile(99), maxLag)
	}
	return false, ""
}

// Merge adds o's counts and histograms into r (exact).
func (r *Result) Merge(o *Result) {
	r.Scheduled += o.Scheduled
	r.Completed += o.Completed
	r.Errors += o.Errors
	r.Unsent += o.Unsent
	r.Timeouts += o.Timeouts
	r.Connects += o.Connects
	r.Workers += o.Workers
	r.ConnsBusy += o.ConnsBusy
	r.Latency.Merge(o.Latency)
	r.Uncorrected.Merge(o.Uncorrected)
	r.SendLag.Merge(o.SendLag)
}

func newResult() *Result {
	return &Result{Latency: hist.New(), Uncorrected: hist.New(), SendLag: hist.New()}
}

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	if c.Pace {
		if c.Rate == 0 {
			return errors.New("a pacing probe needs a rate")
		}
		c.Request, c.KeepAlive = []byte{0}, true
		c.Addr = netip.MustParseAddrPort("127.0.0.1:9") // never dialled
	}
	if !c.Addr.IsValid() || !c.Addr.Addr().Is4() {
		return fmt.Errorf("address %v: an IPv4 address and port are needed", c.Addr)
	}
	if c.Duration <= 0 {
		return errors.New("duration must be positive")
	}
	if len(c.Request) == 0 {
		return errors.New("empty request")
	}
	if c.Protocol == Raw && c.ResponseSize <= 0 {
		return errors.New("raw protocol needs a response size")
	}
	if c.Connections <= 0 {
		c.Connections = 1
	}
	if c.Connections > 1<<20 {
		return fmt.Errorf("%d connections; at most %d", c.Connections, 1<<20)
	}
	if c.Threads <= 0 {
		c.Threads = min(runtime.NumCPU(), c.Connections)
	}
	c.Threads = min(c.Threads, c.Connections)
	if c.Rate > 100_000_000 {
		return fmt.Errorf("rate %d/s is beyond any single client; use at most 100000000", c.Rate)
	}
	if c.Rate > 0 && !c.KeepAlive {
		return errors.New("open-loop runs keep connections alive; use the closed-loop mode for short connections")
	}
	if c.Drain <= 0 {
		c.Drain = 2 * time.Second
	}
	if c.MaxSendLag <= 0 {
		c.MaxSendLag = time.Millisecond
	}
	if c.Spin <= 0 {
		c.Spin = 50 * time.Microsecond
	}
	return nil
}

var epoch = time.Now()

// maxRawWait bounds one epoll wait made without telling the Go scheduler
// (see worker.wait): a stop-the-world waits at most this long for it.
const maxRawWait = int64(10 * time.Millisecond)

func now() int64 { return int64(time.Since(epoch)) }

// Run drives the load and returns what was measured. ctx ends it early
// (with ctx's error).
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	// Workers wait in epoll holding their P (see worker.wait); the rest of
	// the process (control channel, timers, GC) gets Ps of its own.
	if want := c.Threads + 2; runtime.GOMAXPROCS(0) < want {
		prev := runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(prev)
	}
	ws := make([]*worker, c.Threads)
	for i := range ws {
		n := c.Connections / c.Threads
		if i < c.Connections%c.Threads {
			n++
		}
		ws[i] = &worker{cfg: &c, id: i, nconns: n, res: newResult(), busySince: -1}
		ws[i].res.Workers = 1
	}
	// connect everything before the clock starts, so that the first
	// requests do not pay for the handshakes
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	ready := make(chan struct{})
	start := make(chan int64)
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.run(ctx, ready, start)
		}()
	}
	for range ws {
		<-ready
	}
	// a short settle time lets every worker block in its first wait
	t0 := now() + int64(2*time.Millisecond)
	for range ws {
		start <- t0
	}
	wg.Wait()
	total := newResult()
	total.Target = c.Rate
	total.Seconds = c.Duration.Seconds()
	for i, w := range ws {
		if errs[i] != nil {
			return nil, errs[i]
		}
		total.Merge(w.res)
	}
	if err := ctx.Err(); err != nil {
		return total, err
	}
	return total, nil
}

const (
	stIdle = iota
	stConnecting
	stBusy
	stClosed
)

type conn struct {
	fd       int
	state    int
	intended int64 // when the request in flight was due
	sent     int64 // when it was written
	wpos     int   // bytes of the request written (a short write waits for EPOLLOUT)
	p        respParser
}

type worker struct {
	cfg    *Config
	id     int
	nconns int
	res    *Result

	epfd   int
	conns  []conn
	free   ring // idle connections, oldest first: every connection takes its turn
	events []unix.EpollEvent
	buf    []byte
	ev     unix.EpollEvent
	ts     unix.Timespec
	epoll2 bool
	fatal  error
	// done is called for every finished request (ok or not, t its end) and
	// for every connection that became usable or was lost with nothing in
	// flight (t < 0).
	done func(i int32, ok bool, t int64)
	// busySince is when the last free connection was taken while requests
	// were due (-1: a connection is free)
	busySince int64
	// due, if set, runs before each event of a batch is handled: the open
	// loop sends what has fallen due, so that a send never waits behind a
	// batch of responses (each read can cost tens of µs of kernel work).
	due func()
}

// run is one worker thread. It locks its OS thread and lowers the thread's
// timer slack so that a timed epoll wait wakes within microseconds.
func (w *worker) run(ctx context.Context, ready chan<- struct{}, start <-chan int64) error {
	runtime.LockOSThread() // not unlocked: the thread with changed slack exits with the goroutine
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	var err error
	if w.cfg.Realtime {
		if e := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}, 0); e != nil {
			err = fmt.Errorf("realtime scheduling: %w; --realtime needs root (CAP_SYS_NICE)", e)
		}
	}
	if err == nil {
		err = w.setup()
	}
	ready <- struct{}{}
	t0 := <-start
	defer w.close()
	if err != nil {
		return err
	}
	if w.cfg.Rate > 0 {
		w.openLoop(ctx, t0)
	} else {
		w.closedLoop(ctx, t0)
	}
	return w.fatal
}

func (w *worker) setup() error {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll: %w", err)
	}
	w.epfd = fd
	w.epoll2 = true
	w.conns = make([]conn, w.nconns)
	w.free = ring{buf: make([]int32, w.nconns)}
	w.events = make([]unix.EpollEvent, min(w.nconns, 1024))
	w.buf = make([]byte, 64<<10)
	for i := range w.conns {
		w.conns[i].fd = -1
		w.conns[i].state = stClosed
	}
	if w.cfg.Rate == 0 && !w.cfg.KeepAlive {
		return nil // short connections are opened per request
	}
	if w.cfg.Pace {
		for i := range w.conns {
			w.conns[i].state = stIdle
			w.free.push(int32(i))
		}
		return nil
	}
	for i := range w.conns {
		if err := w.dialBlocking(int32(i)); err != nil {
			return err
		}
		w.free.push(int32(i))
	}
	return nil
}

func (w *worker) close() {
	for i := range w.conns {
		if w.conns[i].fd >= 0 {
			unix.Close(w.conns[i].fd)
			w.conns[i].fd = -1
		}
	}
	if w.epfd > 0 {
		unix.Close(w.epfd)
	}
}

func (w *worker) socket() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w (too many connections? raise ulimit -n)", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	return fd, nil
}

func (w *worker) sockaddr() *unix.SockaddrInet4 {
	return &unix.SockaddrInet4{Port: int(w.cfg.Addr.Port()), Addr: w.cfg.Addr.Addr().As4()}
}

// dialBlocking opens connection i before the run, with a timeout.
func (w *worker) dialBlocking(i int32) error {
	fd, err := w.socket()
	if err != nil {
		return err
	}
	tv := unix.NsecToTimeval(int64(3 * time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	for {
		err = unix.Connect(fd, w.sockaddr())
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return fmt.Errorf("connecting to %v: %w", w.cfg.Addr, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	return w.register(i, fd, stIdle, unix.EPOLLIN)
}

func (w *worker) register(i int32, fd, state int, events uint32) error {
	c := &w.conns[i]
	c.fd, c.state, c.wpos = fd, state, 0
	w.ev = unix.EpollEvent{Events: events, Fd: i}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &w.ev); err != nil {
		unix.Close(fd)
		c.fd, c.state = -1, stClosed
		return fmt.Errorf("epoll add: %w", err)
	}
	w.res.Connects++
	return nil
}

// dial starts a non-blocking connect for connection i.
func (w *worker) dial(i int32) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w (too many connections? raise ulimit -n)", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, w.sockaddr())
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return err
	}
	return w.register(i, fd, stConnecting, unix.EPOLLOUT|unix.EPOLLIN)
}

func (w *worker) drop(i int32) {
	c := &w.conns[i]
	if c.fd >= 0 {
		unix.Close(c.fd) // also leaves the epoll set
	}
	c.fd, c.state = -1, stClosed
}

// send writes the request on idle connection i.
func (w *worker) send(i int32, intended, t int64) {
	c := &w.conns[i]
	c.intended, c.sent, c.wpos = intended, t, 0
	if w.cfg.Pace { // no I/O: answered as sent
		c.state = stIdle
		w.done(i, true, t)
		return
	}
	c.state = stBusy
	c.p.reset(w.cfg.Protocol, int64(w.cfg.ResponseSize))
	w.write(i)
}

func (w *worker) write(i int32) {
	c := &w.conns[i]
	req := w.cfg.Request
	for c.wpos < len(req) {
		n, err := rawIO(unix.SYS_WRITE, c.fd, req[c.wpos:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			w.ev = unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: i}
			_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, c.fd, &w.ev)
			return
		}
		if err != 0 || n <= 0 {
			w.fail(i)
			return
		}
		c.wpos += n
	}
}

// rawIO reads or writes a non-blocking socket with a raw system call: it
// never blocks, so the entersyscall/exitsyscall bookkeeping of unix.Read
// and unix.Write (two per request) buys nothing on the hot path.
func rawIO(trap uintptr, fd int, b []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), 0
}

// fail ends the request in flight on i as failed.
func (w *worker) fail(i int32) {
	w.drop(i)
	w.done(i, false, now())
}

func (w *worker) reconnect(i int32) {
	if err := w.dial(i); err != nil {
		w.res.Errors++
		// try again on the next free slot; a dead server shows as errors and
		// unsent requests
	}
}

// wait blocks for events for at most timeout ns (negative: no limit) and
// returns how many arrived.
//
// With epoll_pwait2 the wait is a raw system call: the worker keeps its P
// instead of handing it to the scheduler. Measured (docs/perf.md), the
// ordinary path cost about 10% more CPU per request than wrk: a worker that
// sleeps in epoll for more than 20µs has its P retaken by sysmon, which then
// polls every 20µs and wakes threads; about a quarter of the client's
// context switches were sysmon's. A raw wait is bounded by maxRawWait and
// returns on EINTR, so a stop-the-world (whose preemption signal interrupts
// the wait) is never held up for long.
func (w *worker) wait(timeout int64) int {
	for {
		var n int
		var err error
		if w.epoll2 {
			if timeout < 0 || timeout > maxRawWait {
				timeout = maxRawWait
			}
			w.ts = unix.NsecToTimespec(timeout)
			r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(w.epfd), uintptr(unsafe.Pointer(&w.events[0])),
				uintptr(len(w.events)), uintptr(unsafe.Pointer(&w.ts)), 0, 0)
			n = int(r)
			if e == unix.ENOSYS {
				w.epoll2 = false
				continue
			}
			if e == unix.EINTR {
				return 0 // back through the caller's loop: a preemption point
			}
			if e != 0 {
				err = e
			}
		} else {
			ms := -1
			if timeout >= 0 {
				ms = int((timeout + 999_999) / 1_000_000)
			}
			n, err = unix.EpollWait(w.epfd, w.events, ms)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			w.fatal = fmt.Errorf("epoll wait: %w", err)
			return 0
		}
		return n
	}
}

// handle processes the events of one wait. done is called for every
// finished request (ok or not) with the connection it used.
func (w *worker) handle(n int, done func(i int32, ok bool, t int64)) {
	for k := 0; k < n; k++ {
		if w.due != nil && k > 0 {
			w.due()
		}
		e := w.events[k]
		i := e.Fd
		c := &w.conns[i]
		if c.state == stClosed {
			continue
		}
		if c.state == stConnecting {
			if e.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
				continue
			}
			if v, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || v != 0 {
				w.res.Errors++ // refused or unreachable
				w.drop(i)
				done(i, false, -1)
				continue
			}
			w.ev = unix.EpollEvent{Events: unix.EPOLLIN, Fd: i}
			_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, c.fd, &w.ev)
			c.state = stIdle
			done(i, true, -1) // connected: a request may go
			continue
		}
		if e.Events&unix.EPOLLOUT != 0 && c.state == stBusy && c.wpos < len(w.cfg.Request) {
			w.ev = unix.EpollEvent{Events: unix.EPOLLIN, Fd: i}
			_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, c.fd, &w.ev)
			w.write(i)
		}
		if e.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			continue
		}
		w.readable(i, done)
	}
}

func (w *worker) readable(i int32, done func(i int32, ok bool, t int64)) {
	c := &w.conns[i]
	for {
		n, err := rawIO(unix.SYS_READ, c.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != 0 || n <= 0 { // closed by the server, or reset
			busy := c.state == stBusy
			w.drop(i)
			if busy {
				done(i, false, now())
			} else {
				done(i, false, -1) // an idle connection went away: replace it
			}
			return
		}
		if c.state != stBusy {
			continue // stray bytes on an idle connection: ignore
		}
		used, end := c.p.feed(w.buf[:n])
		if !end {
			continue
		}
		t := now()
		ok := c.p.ok() && used == n
		closing := c.p.close
		c.state = stIdle
		if closing || !ok {
			w.drop(i)
		}
		done(i, ok, t)
		return
	}
}

// openLoop sends this worker's share of the schedule, each request on a free
// connection at its intended time; when none is free the request waits,
// keeping its intended time, so the wait shows in the corrected latency.
func (w *worker) openLoop(ctx context.Context, t0 int64) {
	cfg := w.cfg
	s := Schedule{T0: t0, Rate: cfg.Rate}
	limit := s.Count(int64(cfg.Duration))
	p := &Pacer{S: s, Offset: uint64(w.id), Stride: uint64(cfg.Threads), Limit: limit}
	w.res.Scheduled = int64(p.Remaining())
	end := t0 + int64(cfg.Duration)
	deadline := end + int64(cfg.Drain)
	// spin at most a quarter of this worker's interval between sends: at
	// high rates the worker is busy anyway, and a spinning (real-time)
	// thread must not take the CPU from the server
	interval := int64(cfg.Threads) * 1e9 / int64(cfg.Rate)
	spin, poll := min(int64(cfg.Spin), interval/4), int64(cfg.Poll)
	var lastSend int64
	inflight := 0
	var done func(i int32, ok bool, t int64)
	done = func(i int32, ok bool, t int64) {
		c := &w.conns[i]
		if t >= 0 { // a request finished
			inflight--
			if ok {
				w.res.Latency.Record(time.Duration(t - c.intended))
				w.res.Uncorrected.Record(time.Duration(t - c.sent))
				w.res.Completed++
			} else {
				w.res.Errors++
			}
		}
		if c.state == stIdle {
			if w.free.n == 0 && w.busySince >= 0 {
				w.res.ConnsBusy += busyIn(w.busySince, max(t, now()), end)
				w.busySince = -1
			}
			w.free.push(i)
		} else if c.state == stClosed {
			w.reconnect(i)
		}
	}
	w.done = done
	// sendDue sends every request due by now on free connections and
	// returns the time it last read
	sendDue := func() int64 {
		t := now()
		for w.free.n > 0 {
			_, at, ok := p.Next()
			if !ok || at > t {
				break
			}
			p.Take()
			i := w.free.pop()
			w.res.SendLag.Record(time.Duration(t - at))
			inflight++
			w.send(i, at, t)
			lastSend = t
			t = now()
		}
		if w.free.n == 0 && w.busySince < 0 {
			if _, at, ok := p.Next(); ok && at <= t {
				// due, and no connection to send it on: from here the lag
				// is the server's (or too few --connections), not ours
				w.busySince = max(at, lastSend)
			}
		}
		return t
	}
	w.due = func() { sendDue() }
	defer func() {
		if w.busySince >= 0 {
			w.res.ConnsBusy += busyIn(w.busySince, now(), end)
		}
	}()
	for ctx.Err() == nil && w.fatal == nil {
		t := sendDue()
		_, next, more := p.Next()
		if !more && inflight == 0 {
			return
		}
		if t >= deadline {
			w.res.Unsent += int64(p.Remaining())
			w.res.Timeouts += int64(inflight)
			return
		}
		timeout := deadline - t
		if more && next > t {
			timeout = min(timeout, next-t)
		}
		if more && next <= t && w.free.n == 0 {
			// behind and every connection busy: wait for a response
			timeout = min(timeout, int64(50*time.Millisecond))
		} else if timeout <= spin || (inflight > 0 && t-lastSend < poll) {
			timeout = 0 // close to the next send, or a response is due: poll, don't sleep
		} else {
			timeout -= spin
		}
		w.handle(w.wait(timeout), done)
	}
}

// busyIn is the part of [from, to) inside the measured window (before end).
func busyIn(from, to, end int64) time.Duration {
	return time.Duration(max(0, min(to, end)-from))
}

// closedLoop keeps one request in flight per connection, wrk style, until
// the window ends; with KeepAlive false each request opens its own
// connection, and its latency includes the handshake.
func (w *worker) closedLoop(ctx context.Context, t0 int64) {
	end := t0 + int64(w.cfg.Duration)
	for t := now(); t < t0; t = now() {
		w.wait(t0 - t)
	}
	short := !w.cfg.KeepAlive
	start := func(i int32) {
		if short {
			w.conns[i].intended = now()
			if err := w.dial(i); err != nil {
				w.res.Errors++
				w.fatal = fmt.Errorf("connecting to %v: %w", w.cfg.Addr, err)
			}
			return
		}
		t := now()
		w.send(i, t, t)
	}
	done := func(i int32, ok bool, t int64) {
		c := &w.conns[i]
		if t >= 0 && t <= end {
			if ok {
				w.res.Latency.Record(time.Duration(t - c.intended))
				w.res.Completed++
			} else {
				w.res.Errors++
			}
		}
		if t > end {
			return
		}
		switch {
		case short && c.state == stIdle && t < 0: // connected
			w.send(i, c.intended, now())
		case short:
			w.drop(i)
			start(i)
		case c.state == stIdle:
			start(i)
		default: // keep-alive connection lost: reopen it
			if err := w.dial(i); err != nil {
				w.res.Errors++
			}
		}
	}
	w.done = done
	for i := range w.conns {
		start(int32(i))
	}
	for ctx.Err() == nil && w.fatal == nil {
		t := now()
		if t >= end {
			return
		}
		w.handle(w.wait(end-t), done)
	}
}

// ring is a FIFO of connection indices; each connection is in it at most
// once, so its capacity is the worker's connection count.
type ring struct {
	buf     []int32
	head, n int
}

func (r *ring) push(i int32) {
	r.buf[(r.head+r.n)%len(r.buf)] = i
	r.n++
}

func (r *ring) pop() int32 {
	i := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return i
}
