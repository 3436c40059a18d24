// Package rr holds the request/response workloads, netperf's TCP_RR, UDP_RR
// and TCP_CRR: one transaction in flight, each timed into an HDR histogram.
package rr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/sock"
	"golang.org/x/sys/unix"
)

func init() {
	workload.Register(TCPRR{})
	workload.Register(UDPRR{})
	workload.Register(TCPCRR{})
}

// DefaultSize is the paper's latency message size.
const DefaultSize = 16

// rawTimeout bounds each raw socket call (µs), so a garbage collection
// waits at most this long for a thread blocked in one.
const rawTimeout = 10_000

// crrTimeout bounds each tcp_crr connection's connect and reads.
const crrTimeout = time.Second

// MaxSize bounds a request and its response.
const MaxSize = 1 << 20

type base struct{}

func (base) Defaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = DefaultSize
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
}

func (base) Validate(p workload.Params) error {
	if p.Direction != "" && p.Direction != "up" {
		return fmt.Errorf("rr workloads have no direction (request and response are the same size); drop --direction")
	}
	return workload.ValidateCommon(p, 1, MaxSize)
}

// Metrics implements workload.Workload for every rr workload.
func (base) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	if c.Transactions == 0 {
		return result.Metrics{}, "", fmt.Errorf("no transaction completed (%d errors)", c.Errors)
	}
	h, err := hist.Decode(c.Histogram)
	if err != nil {
		return result.Metrics{}, "", err
	}
	m := result.Metrics{
		TransactionsPerS: result.F(float64(c.Transactions) / c.Seconds),
		Transactions:     result.I(c.Transactions),
		LatencyUs:        h.Summary(hist.Percentiles),
		DurationS:        result.F(c.Seconds),
	}
	m.LatencyUs["mean"] = float64(h.Mean()) / 1e3
	if c.Errors > 0 {
		m.Errors = result.I(c.Errors)
	}
	return m, c.Histogram, nil
}

// Figures implements workload.Workload for every rr workload:
// transactions/s with its ratio, p50 and p99, and the CPU per transaction.
func (base) Figures() []result.Figure {
	return []result.Figure{result.FigTransactions, result.FigP50, result.FigP99, result.FigCPUPerTrans}
}

// stopOnDone wakes blocked calls on fds when ctx ends; call the returned
// func to release the watcher.
func stopOnDone(ctx context.Context, fds ...*sock.FD) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			for _, f := range fds {
				f.Shutdown()
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

func finish(h *hist.H, r *workload.Report, start time.Time) (workload.Report, error) {
	r.Seconds = time.Since(start).Seconds()
	enc, err := h.Encode()
	r.Histogram = enc
	return *r, err
}

// TCPRR is netperf's TCP_RR: ping-pong of fixed-size messages on one connection.
type TCPRR struct{ base }

// Name implements workload.Workload.
func (TCPRR) Name() string { return "tcp_rr" }

// Summary implements workload.Workload.
func (TCPRR) Summary() string {
	return "TCP request/response ping-pong on one connection: transactions/s and latency percentiles"
}

// Proto implements workload.Workload.
func (TCPRR) Proto() string { return "tcp" }

// Connections implements workload.ConnectionUser: one connection.
func (TCPRR) Connections(map[string]string) workload.Connections {
	return workload.Connections{Style: "long"}
}

// Serve implements workload.Workload: echo every message back.
func (TCPRR) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	ln, err := sock.Listen("tcp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer ln.Close()
	release := stopOnDone(ctx, ln)
	defer release()
	ready()
	var conns []*sock.FD
	defer func() {
		for _, c := range conns {
			c.Shutdown()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return workload.Report{}, nil
		}
		conns = append(conns, c)
		go func() {
			defer c.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if c.SetTimeouts(rawTimeout) != nil {
				return
			}
			stop := func() bool { return ctx.Err() != nil }
			buf := make([]byte, p.MessageSize)
			for {
				ok, err := c.ReadFullRaw(buf, stop)
				if !ok || err != nil {
					return
				}
				if c.WriteAllRaw(buf) != nil {
					return
				}
			}
		}()
	}
}

// Run implements workload.Workload.
func (TCPRR) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := sock.Dial("tcp", addr)
	if err != nil {
		return workload.Report{}, err
	}
	defer c.Close()
	release := stopOnDone(ctx, c)
	defer release()
	if err := c.SetTimeouts(rawTimeout); err != nil {
		return workload.Report{}, err
	}
	stop := func() bool { return ctx.Err() != nil }
	buf := make([]byte, p.MessageSize)
	h := hist.New()
	var r workload.Report
	start := time.Now()
	end := start.Add(p.Duration)
	for {
		t := time.Now()
		if !t.Before(end) {
			break
		}
		if err := c.WriteAllRaw(buf); err != nil {
			return r, fmt.Errorf("tcp_rr send: %w", err)
		}
		ok, err := c.ReadFullRaw(buf, stop)
		if !ok || err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			if err != nil {
				return r, fmt.Errorf("tcp_rr: server closed the connection (%v)", err)
			}
			return r, errors.New("tcp_rr: server closed the connection")
		}
		h.Record(time.Since(t))
		r.Transactions++
	}
	c.CloseWrite()
	return finish(h, &r, start)
}

// UDPRR is netperf's UDP_RR. A lost datagram costs one receive timeout and
// counts as an error; late replies are recognised by sequence number.
type UDPRR struct{ base }

// Name implements workload.Workload.
func (UDPRR) Name() string { return "udp_rr" }

// Summary implements workload.Workload.
func (UDPRR) Summary() string {
	return "UDP request/response ping-pong: transactions/s and latency percentiles; losses counted"
}

// Proto implements workload.Workload.
func (UDPRR) Proto() string { return "udp" }

// Validate implements workload.Workload: a request carries an 8-byte sequence.
func (UDPRR) Validate(p workload.Params) error {
	if p.MessageSize < 8 {
		return fmt.Errorf("udp_rr needs --message-size of at least 8 (it carries a sequence number)")
	}
	return base{}.Validate(p)
}

// Serve implements workload.Workload.
func (UDPRR) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	s, err := sock.Listen("udp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer s.Close()
	release := stopOnDone(ctx, s)
	defer release()
	ready()
	buf := make([]byte, 65536)
	for {
		n, from, err := s.RecvFrom(buf)
		if ctx.Err() != nil {
			return workload.Report{}, nil
		}
		if err != nil || from == nil {
			continue
		}
		_ = s.SendTo(buf[:n], from)
	}
}

// Timeout is how long udp_rr waits for a reply before counting a loss.
const Timeout = 200 * time.Millisecond

// Run implements workload.Workload.
func (UDPRR) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := sock.Dial("udp", addr)
	if err != nil {
		return workload.Report{}, err
	}
	defer c.Close()
	release := stopOnDone(ctx, c)
	defer release()
	if err := c.SetRecvTimeout(Timeout.Microseconds()); err != nil {
		return workload.Report{}, err
	}
	out := make([]byte, p.MessageSize)
	in := make([]byte, p.MessageSize+1)
	h := hist.New()
	var r workload.Report
	var seq uint64
	start := time.Now()
	end := start.Add(p.Duration)
	for {
		t := time.Now()
		if !t.Before(end) || ctx.Err() != nil {
			break
		}
		seq++
		binary.LittleEndian.PutUint64(out, seq)
		if _, err := c.Write(out); err != nil {
			r.Errors++
			if r.Errors > 1000 && r.Transactions == 0 {
				return r, fmt.Errorf("udp_rr send: %w", err)
			}
			continue
		}
		for {
			n, err := c.Read(in)
			if errors.Is(err, unix.EAGAIN) {
				r.Errors++ // lost: timed out
				break
			}
			if err != nil || ctx.Err() != nil {
				if ctx.Err() != nil {
					return r, ctx.Err()
				}
				r.Errors++
				break
			}
			if n >= 8 && binary.LittleEndian.Uint64(in) == seq {
				h.Record(time.Since(t))
				r.Transactions++
				break
			}
			// a late reply to an earlier request: keep waiting for ours
		}
	}
	return finish(h, &r, start)
}

// TCPCRR is netperf's TCP_CRR: connect, request, response, close, repeated.
// The server closes first, as an HTTP/1.0 server does, so client ports do
// not pile up in TIME_WAIT.
type TCPCRR struct{ base }

// Name implements workload.Workload.
func (TCPCRR) Name() string { return "tcp_crr" }

// Summary implements workload.Workload.
func (TCPCRR) Summary() string {
	return "TCP connect/request/response/close per transaction: connections/s and latency"
}

// Proto implements workload.Workload.
func (TCPCRR) Proto() string { return "tcp" }

// Connections implements workload.ConnectionUser: a connection per
// transaction, whose time is mostly the connect.
func (TCPCRR) Connections(map[string]string) workload.Connections {
	return workload.Connections{Style: "short", ConnectBound: true}
}

// Serve implements workload.Workload.
func (TCPCRR) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ln, err := sock.Listen("tcp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer ln.Close()
	release := stopOnDone(ctx, ln)
	defer release()
	ready()
	buf := make([]byte, p.MessageSize)
	for {
		c, err := ln.Accept()
		if err != nil {
			return workload.Report{}, nil
		}
		_ = c.SetTimeouts(crrTimeout.Microseconds()) // a silent client cannot stall the server
		if ok, _ := c.ReadFull(buf); ok {
			_ = c.WriteAll(buf)
		}
		c.Close()
	}
}

// Run implements workload.Workload.
func (TCPCRR) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, p.MessageSize)
	h := hist.New()
	var r workload.Report
	var lastErr error
	start := time.Now()
	end := start.Add(p.Duration)
	for ctx.Err() == nil {
		t := time.Now()
		if !t.Before(end) {
			break
		}
		// bounded, so a dropped SYN or a silent server cannot keep the
		// agent busy for the kernel's two-minute connect timeout
		c, err := sock.DialTimeout("tcp", addr, crrTimeout)
		if err != nil {
			r.Errors++
			lastErr = err
			if r.Errors > 100 && r.Errors > r.Transactions {
				return r, fmt.Errorf("tcp_crr: %d connections failed: %w", r.Errors, err)
			}
			continue
		}
		err = c.WriteAll(buf)
		ok := false
		if err == nil {
			ok, err = c.ReadFull(buf)
		}
		if ok {
			_, _ = c.Read(buf[:1]) // wait for the server's FIN
			h.Record(time.Since(t))
			r.Transactions++
		} else {
			r.Errors++
			lastErr = err
		}
		c.Close()
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if r.Transactions == 0 && lastErr != nil {
		return r, fmt.Errorf("tcp_crr: %w", lastErr)
	}
	return finish(h, &r, start)
}
