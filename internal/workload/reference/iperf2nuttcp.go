package reference

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	workload.Register(Iperf2{})
	workload.Register(Nuttcp{})
}

// streamDefaults are tcp_stream's defaults, so the reference streams
// measure the same thing when the user sets nothing.
func streamDefaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = 256
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
	if p.Direction == "" {
		p.Direction = "up"
	}
}

func streamMetrics(c workload.Report) (result.Metrics, string, error) {
	if c.Seconds <= 0 {
		return result.Metrics{}, "", fmt.Errorf("no transfer reported")
	}
	return result.Metrics{
		ThroughputBps: result.F(float64(c.Bytes) * 8 / c.Seconds),
		Bytes:         result.I(c.Bytes),
		DurationS:     result.F(c.Seconds),
	}, "", nil
}

func secondsArg(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Iperf2 is iperf 2's TCP test (Debian package iperf), with cnperf's
// message size as its -l: a blocking write loop in one thread, as netperf's.
type Iperf2 struct{}

// Name implements workload.Workload.
func (Iperf2) Name() string { return "iperf2_tcp" }

// Bulk: a one-way stream.
func (Iperf2) Bulk() bool { return true }

// Summary implements workload.Workload.
func (Iperf2) Summary() string {
	return "reference: iperf 2 TCP throughput (-l = message size, -R for down) on the same path"
}

// Proto implements workload.Workload.
func (Iperf2) Proto() string { return "tcp" }

// Figures implements workload.Workload: as tcp_stream's.
func (Iperf2) Figures() []result.Figure {
	return []result.Figure{result.FigThroughput, result.FigCPUPerByte}
}

// Defaults implements workload.Workload.
func (Iperf2) Defaults(p *workload.Params) { streamDefaults(p) }

// Validate implements workload.Workload.
func (Iperf2) Validate(p workload.Params) error {
	if p.Duration < 500*time.Millisecond {
		return fmt.Errorf("iperf2_tcp needs --duration 500ms or more")
	}
	return workload.ValidateCommon(p, 1, 16<<20)
}

// Serve implements workload.Workload.
func (Iperf2) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serveTool(ctx, p.Port, ready, "iperf", "-s", "-p", strconv.Itoa(p.Port))
}

// Run implements workload.Workload.
func (Iperf2) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	args := []string{"iperf", "-c", addr.Addr().String(), "-p", strconv.Itoa(int(addr.Port())),
		"-t", secondsArg(p.Duration), "-l", strconv.Itoa(p.MessageSize), "-y", "C"}
	if p.Direction == "down" {
		args = append(args, "-R")
	}
	out, err := runTool(ctx, args...)
	if err != nil {
		return workload.Report{}, err
	}
	return ParseIperf2(out)
}

// ParseIperf2 reads iperf 2's CSV report (-y C):
// time,src,sport,dst,dport,id,interval,bytes,bits/s. The whole-test line is
// the one whose interval starts at 0.0 and is the longest; with one stream
// it is the last. The interval is printed to 0.1 s only, so the seconds are
// bytes*8 / bits/s.
func ParseIperf2(out []byte) (workload.Report, error) {
	var best workload.Report
	var bestEnd float64 = -1
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 9 {
			continue
		}
		from, to, ok := strings.Cut(f[6], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseFloat(from, 64)
		end, err2 := strconv.ParseFloat(to, 64)
		bytes, err3 := strconv.ParseInt(f[7], 10, 64)
		bps, err4 := strconv.ParseFloat(f[8], 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || start != 0 || end < bestEnd {
			continue
		}
		bestEnd = end
		best = workload.Report{Bytes: bytes}
		if bps > 0 {
			best.Seconds = float64(bytes) * 8 / bps
		}
	}
	if bestEnd < 0 {
		return workload.Report{}, fmt.Errorf("reading iperf output: no CSV report line in %q", firstLine(out))
	}
	if best.Bytes == 0 || best.Seconds == 0 {
		return workload.Report{}, fmt.Errorf("iperf reported no transfer")
	}
	return best, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// Nuttcp is nuttcp's TCP test, with cnperf's message size as its -l. The
// control connection uses the cell's port, the data connection the next.
type Nuttcp struct{}

// Name implements workload.Workload.
func (Nuttcp) Name() string { return "nuttcp_tcp" }

// Bulk: a one-way stream.
func (Nuttcp) Bulk() bool { return true }

// Summary implements workload.Workload.
func (Nuttcp) Summary() string {
	return "reference: nuttcp TCP throughput (-l = message size, -r for down; data on port+1) on the same path"
}

// Proto implements workload.Workload.
func (Nuttcp) Proto() string { return "tcp" }

// Figures implements workload.Workload: as tcp_stream's.
func (Nuttcp) Figures() []result.Figure {
	return []result.Figure{result.FigThroughput, result.FigCPUPerByte}
}

// Defaults implements workload.Workload.
func (Nuttcp) Defaults(p *workload.Params) { streamDefaults(p) }

// Validate implements workload.Workload.
func (Nuttcp) Validate(p workload.Params) error {
	if p.Duration < 500*time.Millisecond {
		return fmt.Errorf("nuttcp_tcp needs --duration 500ms or more")
	}
	if p.Port >= 65535 {
		return fmt.Errorf("nuttcp_tcp needs two ports (control and data): port %d is the last", p.Port)
	}
	return workload.ValidateCommon(p, 1, 16<<20)
}

// Serve implements workload.Workload: a server in the foreground that
// takes any number of clients (the readiness probe is one).
func (Nuttcp) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serveTool(ctx, p.Port, ready, "nuttcp", "-S", "--nofork", "-P", strconv.Itoa(p.Port))
}

// Run implements workload.Workload.
func (Nuttcp) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	args := []string{"nuttcp", "-P", strconv.Itoa(int(addr.Port())), "-p", strconv.Itoa(int(addr.Port()) + 1),
		"-T" + secondsArg(p.Duration), "-l" + strconv.Itoa(p.MessageSize), "-fparse"}
	if p.Direction == "down" {
		args = append(args, "-r")
	}
	out, err := runTool(ctx, append(args, addr.Addr().String())...)
	if err != nil {
		return workload.Report{}, err
	}
	return ParseNuttcp(out)
}

// ParseNuttcp reads nuttcp's -fparse summary
// ("megabytes=... real_seconds=... rate_Mbps=..."; MB are 2^20 bytes).
// real_seconds has two decimals, so the seconds are bytes*8 / rate.
func ParseNuttcp(out []byte) (workload.Report, error) {
	for _, line := range strings.Split(string(out), "\n") {
		kv := map[string]float64{}
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				kv[k] = x
			}
		}
		mb, ok1 := kv["megabytes"]
		rate, ok2 := kv["rate_Mbps"]
		if !ok1 || !ok2 {
			continue
		}
		if mb <= 0 || rate <= 0 {
			return workload.Report{}, fmt.Errorf("nuttcp reported no transfer")
		}
		bytes := mb * (1 << 20)
		return workload.Report{Bytes: int64(bytes + 0.5), Seconds: bytes * 8 / (rate * 1e6)}, nil
	}
	return workload.Report{}, fmt.Errorf("reading nuttcp output: no megabytes=/rate_Mbps= summary in %q", firstLine(out))
}

// Metrics implements workload.Workload.
func (Iperf2) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	return streamMetrics(c)
}

// Metrics implements workload.Workload.
func (Nuttcp) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	return streamMetrics(c)
}
