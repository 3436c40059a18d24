// Package bulk is the bulk transfer of seed 001's sparkyfish runs (§IV, Fig. 3(a)): a
// fixed amount (default 1 GiB) uploaded and then downloaded between two
// pods, each direction timed from the receiver's first byte to its last.
// Unlike tcp_stream, the amount is fixed and the time is the figure.
package bulk

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/sock"
)

func init() { workload.Register(TCP{}) }

// Defaults.
const (
	DefaultAmount = 1 << 30 // 1 GiB, the study's
	DefaultWrite  = 64 << 10
	// DefaultCap bounds one direction: a transfer that does not finish in
	// time is an error, not a figure.
	DefaultCap = 60 * time.Second
)

var optAmount = option.Spec{Name: "amount", Kind: option.String, Default: "1GiB",
	Help: "bytes to move each way: a number with an optional KiB, MiB or GiB"}

// TCP is the workload.
type TCP struct{}

// Name implements workload.Workload.
func (TCP) Name() string { return "tcp_bulk" }

// Summary implements workload.Workload.
func (TCP) Summary() string {
	return "upload then download of a fixed amount (--amount, default 1 GiB), each direction timed (sparkyfish)"
}

// Proto implements workload.Workload.
func (TCP) Proto() string { return "tcp" }

// Bulk: one-way transfers.
func (TCP) Bulk() bool { return true }

// Options implements workload.Optioned.
func (TCP) Options() []option.Spec { return []option.Spec{optAmount} }

// CheckOptions implements workload.OptionChecker.
func (TCP) CheckOptions(extra map[string]string) error {
	if v, ok := extra[optAmount.Name]; ok {
		if _, err := ParseAmount(v); err != nil {
			return err
		}
	}
	return nil
}

// ParseAmount reads "1GiB", "100MiB", "64KiB" or a byte count.
func ParseAmount(s string) (int64, error) {
	num, mult := s, int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			num, mult = strings.TrimSuffix(s, suf), m
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (64<<30)/mult {
		return 0, fmt.Errorf("--amount %q: use a positive size up to 64GiB, e.g. 1GiB or 100MiB", s)
	}
	return n * mult, nil
}

func amount(p workload.Params) int64 {
	if n, err := ParseAmount(p.Extra[optAmount.Name]); err == nil {
		return n
	}
	return DefaultAmount
}

// Figures implements workload.Workload: the transfer time, its throughput.
func (TCP) Figures() []result.Figure {
	return []result.Figure{
		{Key: result.KeyDuration, Label: "ms", Unit: "ms", Scale: 0.001, Better: result.LowerBetter, Kind: result.KindTime, Ratio: true},
		result.FigThroughput, result.FigCPUPerByte,
	}
}

// Defaults implements workload.Workload: Duration is the cap on one
// direction; the write size is MessageSize.
func (TCP) Defaults(p *workload.Params) {
	if p.Duration == 0 {
		p.Duration = DefaultCap
	}
	if p.MessageSize == 0 {
		p.MessageSize = DefaultWrite
	}
}

// Validate implements workload.Workload.
func (TCP) Validate(p workload.Params) error {
	return workload.ValidateCommon(p, 1, 16<<20)
}

// Next implements workload.Stepper: up, then down (only the one asked
// with --direction).
func (TCP) Next(base workload.Params, done []workload.StepResult) (workload.Params, string, bool) {
	dirs := []string{"up", "down"}
	if base.Direction != "" {
		dirs = []string{base.Direction}
	}
	if len(done) >= len(dirs) {
		return base, "", false
	}
	p := base
	p.Direction = dirs[len(done)]
	return p, "direction=" + p.Direction, true
}

func dir(p workload.Params) string {
	if p.Direction == "" {
		return "up"
	}
	return p.Direction
}

// send writes exactly n bytes in writes of size.
func send(c *sock.FD, n int64, size int, end time.Time) (workload.Report, error) {
	buf := make([]byte, size)
	var r workload.Report
	for r.Bytes < n {
		if time.Now().After(end) {
			return r, fmt.Errorf("sent %d of %d bytes before the cap; raise --duration or lower --amount", r.Bytes, n)
		}
		b := buf
		if left := n - r.Bytes; left < int64(len(b)) {
			b = b[:left]
		}
		if err := c.WriteAll(b); err != nil {
			return r, err
		}
		r.Bytes += int64(len(b))
		r.Messages++
	}
	return r, nil
}

// recv reads until EOF, timing the first byte to the last.
func recv(c *sock.FD) workload.Report {
	buf := make([]byte, 256<<10)
	var r workload.Report
	var first, last time.Time
	for {
		n, err := c.Read(buf)
		if n <= 0 || err != nil {
			break
		}
		last = time.Now()
		if first.IsZero() {
			first = last
		}
		r.Bytes += int64(n)
		r.Messages++
	}
	if !first.IsZero() {
		r.Seconds = last.Sub(first).Seconds()
	}
	return r
}

// Serve implements workload.Workload: one transfer per connection.
func (TCP) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	ln, err := sock.Listen("tcp", p.Port)
	if err != nil {
		return workload.Report{}, err
	}
	defer ln.Close()
	go func() { <-ctx.Done(); ln.Shutdown() }()
	ready()
	var rep workload.Report
	for {
		c, err := ln.Accept()
		if err != nil {
			return rep, nil
		}
		stop := context.AfterFunc(ctx, func() { c.Shutdown() })
		runtime.LockOSThread()
		if dir(p) == "down" {
			r, err := send(c, amount(p), p.MessageSize, time.Now().Add(p.Duration))
			c.CloseWrite()
			if err != nil {
				rep.Errors++
			}
			rep.Bytes, rep.Messages = r.Bytes, r.Messages
		} else {
			rep = recv(c)
			c.CloseWrite() // tells the client every byte is in
		}
		runtime.UnlockOSThread()
		stop()
		c.Close()
	}
}

// Run implements workload.Workload.
func (TCP) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := sock.Dial("tcp", addr)
	if err != nil {
		return workload.Report{}, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Shutdown() })
	defer stop()
	if dir(p) == "down" {
		r := recv(c)
		return r, ctx.Err()
	}
	r, err := send(c, amount(p), p.MessageSize, time.Now().Add(p.Duration))
	if err != nil {
		return r, err
	}
	c.CloseWrite()
	buf := make([]byte, 1)
	_, _ = c.Read(buf) // the server's end: it has read everything
	return r, ctx.Err()
}

// Metrics implements workload.Workload: the receiver's count must be the
// whole amount.
func (TCP) Metrics(p workload.Params, c, s workload.Report) (result.Metrics, string, error) {
	rx := s
	if dir(p) == "down" {
		rx = c
	}
	want := amount(p)
	if rx.Bytes != want || rx.Seconds <= 0 {
		return result.Metrics{}, "", fmt.Errorf("the receiver got %d of %d bytes", rx.Bytes, want)
	}
	return result.Metrics{
		DurationS:     result.F(rx.Seconds),
		ThroughputBps: result.F(float64(rx.Bytes) * 8 / rx.Seconds),
		Bytes:         result.I(rx.Bytes),
		Messages:      result.I(rx.Messages),
	}, "", nil
}
