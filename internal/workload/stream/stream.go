// Package stream holds the bulk-transfer workloads, netperf's TCP_STREAM and
// UDP_STREAM (sockperf throughput): one side sends messages of a fixed size
// as fast as it can for the duration, the other counts what arrives.
// Throughput is always what the receiver got, over the receiver's window.
package stream

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/sock"
	"golang.org/x/sys/unix"
)

func init() {
	workload.Register(TCP{})
	workload.Register(UDP{})
}

// Defaults from the paper: 256 B across hosts (TCP), 1024 B UDP.
const (
	DefaultTCPSize = 256
	DefaultUDPSize = 1024
	readBuf        = 256 << 10
)

// window tracks the first and last moment data moved.
type window struct {
	first, last atomic.Int64
}

func (w *window) touch() {
	now := time.Now().UnixNano()
	w.first.CompareAndSwap(0, now)
	w.last.Store(now)
}

func (w *window) seconds() float64 {
	f, l := w.first.Load(), w.last.Load()
	if f == 0 || l <= f {
		return 0
	}
	return float64(l-f) / 1e9
}

func direction(p workload.Params) string {
	if p.Direction == "" {
		return "up"
	}
	return p.Direction
}

func metrics(p workload.Params, c, s workload.Report, udp bool) (result.Metrics, string, error) {
	rx, tx := s, c
	if direction(p) == "down" {
		rx, tx = c, s
	}
	if rx.Bytes == 0 || rx.Seconds == 0 {
		return result.Metrics{}, "", fmt.Errorf("the receiver got no data (sender sent %d messages)", tx.Messages)
	}
	m := result.Metrics{
		ThroughputBps: result.F(float64(rx.Bytes) * 8 / rx.Seconds),
		Bytes:         result.I(rx.Bytes),
		Messages:      result.I(rx.Messages),
		DurationS:     result.F(rx.Seconds),
	}
	if udp && tx.Messages > 0 {
		loss := 1 - float64(rx.Messages)/float64(tx.Messages)
		if loss < 0 {
			loss = 0
		}
		m.LossRatio = result.F(loss)
		m.Extra = map[string]float64{result.ExtraSentMessages: float64(tx.Messages), result.ExtraSentBps: float64(tx.Bytes) * 8 / tx.Seconds}
	}
	return m, "", nil
}

func validate(p workload.Params, max int) error {
	return workload.ValidateCommon(p, 1, max)
}

// TCP is netperf's TCP_STREAM.
type TCP struct{}

// Name implements workload.Workload.
func (TCP) Name() string { return "tcp_stream" }

// Bulk: a one-way stream.
func (TCP) Bulk() bool { return true }

// Summary implements workload.Workload.
func (TCP) Summary() string {
	return "TCP bulk transfer of fixed-size writes, either direction: receiver's throughput"
}

// Proto implements workload.Workload.
func (TCP) Proto() string { return "tcp" }

// Figures implements workload.Workload: throughput with its ratio and the
// CPU per payload byte.
func (TCP) Figures() []result.Figure {
	return []result.Figure{result.FigThroughput, result.FigCPUPerByte}
}

// Defaults implements workload.Workload.
func (TCP) Defaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = DefaultTCPSize
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
	if p.Direction == "" {
		p.Direction = "up"
	}
}

// Validate implements workload.Workload.
func (TCP) Validate(p workload.Params) error { return validate(p, 16<<20) }

// Metrics implements workload.Workload.
func (TCP) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	return metrics(p, c, s, false)
}

// Nagle stays on in a stream, both ends, as in netperf's TCP_STREAM and
// iperf3, iperf 2 and nuttcp by default (their -D, -N, -N, -D turn it off).
// It is not a detail: with TCP_NODELAY, 128 KiB writes moved about twice as
// much on this machine's pod paths (vxlan, host-gw) as with Nagle, in
// cnperf and in each of those tools alike, and put vxlan above baseline
// (docs/validation.md, "Streams"). tcp_stream set it until then, because
// sock.Dial and Accept set it for the round-trip workloads.
func dialStream(addr netip.AddrPort) (*sock.FD, error) {
	c, err := sock.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if err := c.SetNoDelay(false); err != nil {
		c.Close()
		return nil, fmt.Errorf("clearing TCP_NODELAY: %w", err)
	}
	return c, nil
}

// acceptStream is Accept with Nagle back on (see dialStream).
func acceptStream(ln *sock.FD) (*sock.FD, error) {
	c, err := ln.Accept()
	if err != nil {
		return nil, err
	}
	if err := c.SetNoDelay(false); err != nil {
		c.Close()
		return nil, fmt.Errorf("clearing TCP_NODELAY: %w", err)
	}
	return c, nil
}

// rawTimeout bounds each raw socket call of a stream (µs), so that a
// garbage collection waits at most this long for a thread blocked in one.
const rawTimeout = 10_000

// The stream's hot loops write and read with raw system calls on a locked
// thread, as tcp_rr does (internal/workload/sock): with ordinary blocking
// calls every write that waits for send-buffer space (most of them, in a
// stream) has its P retaken by the runtime's sysmon after 20 µs and must
// win it back, and sysmon polls every 20 µs while it waits. Measured on
// loopback, 128 KiB writes, client on one CPU: 1.3 context switches, 0.6
// futex and 0.36 nanosleep calls per write, against iperf3's 0.06 context
// switches (docs/perf.md). Each raw call is bounded by the socket timeouts
// above; stop says when a timed-out call should give up.

func sendFor(c *sock.FD, size int, d time.Duration, stop func() bool) (workload.Report, error) {
	buf := make([]byte, size)
	var r workload.Report
	if err := c.SetTimeouts(rawTimeout); err != nil {
		return r, err
	}
	start := time.Now()
	end := start.Add(d)
	for i := 0; ; i++ {
		// time.Now costs ~20ns; checking every 16 writes keeps it off the profile.
		if i&15 == 0 && (!time.Now().Before(end) || stop()) {
			break
		}
		if err := writeAll(c, buf, stop); err != nil {
			return r, err
		}
		r.Bytes += int64(size)
		r.Messages++
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// writeAll writes all of b with raw calls; a call that timed out is
// retried until stop.
func writeAll(c *sock.FD, b []byte, stop func() bool) error {
	for off := 0; off < len(b); {
		n, err := c.WriteRaw(b[off:])
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				if stop() {
					return err
				}
				continue
			}
			return err
		}
		off += n
	}
	return nil
}

func drain(c *sock.FD, w *window, stop func() bool) (bytes, reads int64) {
	buf := make([]byte, readBuf)
	if c.SetTimeouts(rawTimeout) != nil {
		return
	}
	for {
		n, err := c.ReadRaw(buf)
		if err != nil {
			if (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && !stop() {
				continue
			}
			return
		}
		if n == 0 {
			return
		}
		w.touch()
		bytes += int64(n)
		reads++
	}
}

// Serve implements workload.Workload.
func (TCP) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	ln, err := sock.Listen("tcp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer ln.Close()
	var (
		mu    sync.Mutex
		conns []*sock.FD
		wg    sync.WaitGroup
		rep   workload.Report
		w     window
	)
	go func() {
		<-ctx.Done()
		ln.Shutdown()
		mu.Lock()
		for _, c := range conns {
			c.Shutdown()
		}
		mu.Unlock()
	}()
	ready()
	for {
		c, err := acceptStream(ln)
		if err != nil {
			break
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			stop := func() bool { return ctx.Err() != nil }
			if direction(p) == "down" {
				r, _ := sendFor(c, p.MessageSize, p.Duration, stop)
				c.CloseWrite()
				mu.Lock()
				rep.Bytes += r.Bytes
				rep.Messages += r.Messages
				rep.Seconds = r.Seconds
				mu.Unlock()
				return
			}
			b, n := drain(c, &w, stop)
			mu.Lock()
			rep.Bytes += b
			rep.Messages += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if direction(p) == "up" {
		rep.Seconds = w.seconds()
	}
	return rep, nil
}

// Run implements workload.Workload.
func (TCP) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := dialStream(addr)
	if err != nil {
		return workload.Report{}, err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Shutdown() }()
	stop := func() bool { return ctx.Err() != nil }
	if direction(p) == "down" {
		var w window
		b, n := drain(c, &w, stop)
		if ctx.Err() != nil {
			return workload.Report{}, ctx.Err()
		}
		return workload.Report{Bytes: b, Messages: n, Seconds: w.seconds()}, nil
	}
	r, err := sendFor(c, p.MessageSize, p.Duration, stop)
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		return r, fmt.Errorf("tcp_stream send: %w", err)
	}
	c.CloseWrite()
	// wait for the server to finish reading, so the receiver's window closes
	// before the coordinator stops it.
	buf := make([]byte, 1)
	for {
		// the socket's receive timeout (rawTimeout) ends a read early
		if _, err := c.Read(buf); (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) && !stop() {
			continue
		}
		return r, nil
	}
}

// UDP is netperf's UDP_STREAM / sockperf throughput: datagrams of a fixed
// size as fast as the sender can; loss is what the receiver did not get.
type UDP struct{}

// Name implements workload.Workload.
func (UDP) Name() string { return "udp_stream" }

// Bulk: a one-way stream.
func (UDP) Bulk() bool { return true }

// Summary implements workload.Workload.
func (UDP) Summary() string {
	return "UDP datagrams of a fixed size as fast as possible, either direction: throughput and loss"
}

// Proto implements workload.Workload.
func (UDP) Proto() string { return "udp" }

// Figures implements workload.Workload: throughput with its ratio, loss,
// and the CPU per payload byte.
func (UDP) Figures() []result.Figure {
	loss := result.FigLoss
	loss.Label = "loss"
	return []result.Figure{result.FigThroughput, loss, result.FigCPUPerByte}
}

// Defaults implements workload.Workload.
func (UDP) Defaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = DefaultUDPSize
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
	if p.Direction == "" {
		p.Direction = "up"
	}
}

// Validate implements workload.Workload.
func (UDP) Validate(p workload.Params) error { return validate(p, 65507) }

// Metrics implements workload.Workload.
func (UDP) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	return metrics(p, c, s, true)
}

// goMagic starts a download: the client's first datagram.
var goMagic = []byte("cnperf-go")

// Serve implements workload.Workload.
func (UDP) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := sock.Listen("udp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer s.Close()
	s.SetBuffers(4 << 20)
	go func() { <-ctx.Done(); s.Shutdown() }()
	ready()
	buf := make([]byte, 65536)
	var rep workload.Report
	var w window
	for {
		n, from, err := s.RecvFrom(buf)
		if ctx.Err() != nil {
			break
		}
		if err != nil || from == nil {
			continue
		}
		if direction(p) == "down" {
			if n == len(goMagic) && string(buf[:n]) == string(goMagic) {
				return sendDatagrams(ctx, s, from, p)
			}
			continue
		}
		w.touch()
		rep.Bytes += int64(n)
		rep.Messages++
	}
	rep.Seconds = w.seconds()
	return rep, nil
}

func sendDatagrams(ctx context.Context, s *sock.FD, to unix.Sockaddr, p workload.Params) (workload.Report, error) {
	buf := make([]byte, p.MessageSize)
	var r workload.Report
	start := time.Now()
	end := start.Add(p.Duration)
	for i := 0; ctx.Err() == nil; i++ {
		if i&15 == 0 && !time.Now().Before(end) {
			break
		}
		if err := s.SendTo(buf, to); err != nil {
			continue // ENOBUFS: the queue is full; that datagram is lost
		}
		r.Bytes += int64(len(buf))
		r.Messages++
	}
	r.Seconds = time.Since(start).Seconds()
	// tell the client the stream is over
	for i := 0; i < 3; i++ {
		_ = s.SendTo(goMagic, to)
	}
	return r, nil
}

// Run implements workload.Workload.
func (UDP) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := sock.Dial("udp", addr)
	if err != nil {
		return workload.Report{}, err
	}
	defer c.Close()
	go func() { <-ctx.Done(); c.Shutdown() }()
	if direction(p) == "down" {
		return recvDatagrams(ctx, c, p)
	}
	buf := make([]byte, p.MessageSize)
	var r workload.Report
	start := time.Now()
	end := start.Add(p.Duration)
	for i := 0; ctx.Err() == nil; i++ {
		if i&15 == 0 && !time.Now().Before(end) {
			break
		}
		if _, err := c.Write(buf); err != nil {
			continue // ECONNREFUSED or ENOBUFS: not delivered
		}
		r.Bytes += int64(len(buf))
		r.Messages++
	}
	r.Seconds = time.Since(start).Seconds()
	time.Sleep(100 * time.Millisecond) // let the last datagrams land
	return r, ctx.Err()
}

func recvDatagrams(ctx context.Context, c *sock.FD, p workload.Params) (workload.Report, error) {
	s := c
	s.SetBuffers(4 << 20)
	_ = s.SetRecvTimeout(100_000)
	buf := make([]byte, 65536)
	var r workload.Report
	var w window
	deadline := time.Now().Add(p.Duration + 5*time.Second)
	started := false
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if !started {
			_, _ = s.Write(goMagic)
		}
		n, err := s.Read(buf)
		if err != nil {
			if started && time.Since(time.Unix(0, w.last.Load())) > 500*time.Millisecond {
				break
			}
			continue
		}
		if n == len(goMagic) && string(buf[:n]) == string(goMagic) {
			if started {
				break
			}
			continue
		}
		started = true
		w.touch()
		r.Bytes += int64(n)
		r.Messages++
	}
	r.Seconds = w.seconds()
	return r, ctx.Err()
}
