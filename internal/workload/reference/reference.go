// Package reference runs the reference tools — iperf3, iperf 2, nuttcp and
// sockperf — as cnperf workloads, inside the same agents and pods as
// cnperf's own workloads. `cnperf run --workloads tcp_stream,iperf3_tcp,tcp_rr,sockperf_tcp`
// therefore measures both on the very same lab path, side by side in one
// run: that is how cnperf's numbers are validated (docs/validation.md).
package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() {
	workload.Register(Iperf3{})
	workload.Register(Sockperf{})
}

// serveTool runs a server command until ctx ends, reporting ready once its
// port accepts (TCP) connections.
func serveTool(ctx context.Context, port int, ready func(), argv ...string) (workload.Report, error) {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return workload.Report{}, fmt.Errorf("%s is not installed (apt-get install %s)", argv[0], argv[0])
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return workload.Report{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-done:
			return workload.Report{}, fmt.Errorf("%s exited: %v: %s", argv[0], err, strings.TrimSpace(out.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if i > 250 {
			_ = cmd.Process.Kill()
			<-done
			return workload.Report{}, fmt.Errorf("%s did not listen on port %d", argv[0], port)
		}
	}
	ready()
	select {
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	case err := <-done:
		return workload.Report{}, fmt.Errorf("%s exited early: %v: %s", argv[0], err, strings.TrimSpace(out.String()))
	}
	return workload.Report{}, nil
}

func runTool(ctx context.Context, argv ...string) ([]byte, error) {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("%s is not installed (apt-get install %s)", argv[0], argv[0])
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()+" "+string(out)))
	}
	return out, nil
}

// Iperf3 is iperf3's TCP test, with cnperf's message size as iperf3's -l.
type Iperf3 struct{}

// Name implements workload.Workload.
func (Iperf3) Name() string { return "iperf3_tcp" }

// Bulk: a one-way stream.
func (Iperf3) Bulk() bool { return true }

// Summary implements workload.Workload.
func (Iperf3) Summary() string {
	return "reference: iperf3 TCP throughput (-l = message size, -R for down) on the same path"
}

// Proto implements workload.Workload.
func (Iperf3) Proto() string { return "tcp" }

// Figures implements workload.Workload: as tcp_stream's.
func (Iperf3) Figures() []result.Figure {
	return []result.Figure{result.FigThroughput, result.FigCPUPerByte}
}

// Defaults implements workload.Workload.
func (Iperf3) Defaults(p *workload.Params) {
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

// Validate implements workload.Workload.
func (Iperf3) Validate(p workload.Params) error {
	if p.Duration < time.Second {
		return fmt.Errorf("iperf3 runs whole seconds; use --duration 1s or more")
	}
	return workload.ValidateCommon(p, 1, 16<<20)
}

// Serve implements workload.Workload.
func (Iperf3) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serveTool(ctx, p.Port, ready, "iperf3", "-s", "-p", strconv.Itoa(p.Port))
}

// Run implements workload.Workload.
func (Iperf3) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	args := []string{"iperf3", "-c", addr.Addr().String(), "-p", strconv.Itoa(int(addr.Port())),
		"-t", strconv.Itoa(int(p.Duration.Round(time.Second).Seconds())), "-l", strconv.Itoa(p.MessageSize), "-J"}
	if p.Direction == "down" {
		args = append(args, "-R")
	}
	out, err := runTool(ctx, args...)
	if err != nil {
		return workload.Report{}, err
	}
	return ParseIperf3(out)
}

// ParseIperf3 reads iperf3 -J output: what the receiver got.
func ParseIperf3(out []byte) (workload.Report, error) {
	var doc struct {
		End struct {
			SumReceived struct {
				Seconds       float64 `json:"seconds"`
				Bytes         float64 `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return workload.Report{}, fmt.Errorf("reading iperf3 output: %w", err)
	}
	if doc.Error != "" {
		return workload.Report{}, fmt.Errorf("iperf3: %s", doc.Error)
	}
	s := doc.End.SumReceived
	if s.Seconds == 0 {
		return workload.Report{}, fmt.Errorf("iperf3 reported no transfer")
	}
	return workload.Report{Bytes: int64(s.Bytes), Seconds: s.Seconds}, nil
}

// Metrics implements workload.Workload.
func (Iperf3) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	return result.Metrics{
		ThroughputBps: result.F(float64(c.Bytes) * 8 / c.Seconds),
		Bytes:         result.I(c.Bytes),
		DurationS:     result.F(c.Seconds),
	}, "", nil
}

// Sockperf is sockperf's TCP ping-pong, reported as full round trips.
type Sockperf struct{}

// Name implements workload.Workload.
func (Sockperf) Name() string { return "sockperf_tcp" }

// Summary implements workload.Workload.
func (Sockperf) Summary() string {
	return "reference: sockperf ping-pong over TCP (round-trip percentiles) on the same path"
}

// Proto implements workload.Workload.
func (Sockperf) Proto() string { return "tcp" }

// Figures implements workload.Workload: as tcp_rr's, to be held against them.
func (Sockperf) Figures() []result.Figure {
	return []result.Figure{result.FigTransactions, result.FigP50, result.FigP99, result.FigCPUPerTrans}
}

// Defaults implements workload.Workload.
func (Sockperf) Defaults(p *workload.Params) {
	if p.MessageSize == 0 {
		p.MessageSize = 16
	}
	if p.Duration == 0 {
		p.Duration = 5 * time.Second
	}
}

// Validate implements workload.Workload.
func (Sockperf) Validate(p workload.Params) error {
	if p.Duration < time.Second {
		return fmt.Errorf("sockperf runs whole seconds; use --duration 1s or more")
	}
	if p.Direction != "" && p.Direction != "up" {
		return fmt.Errorf("sockperf ping-pong has no direction; drop --direction")
	}
	return workload.ValidateCommon(p, 14, 65000)
}

// Serve implements workload.Workload.
func (Sockperf) Serve(ctx context.Context, p workload.Params, ready func()) (workload.Report, error) {
	return serveTool(ctx, p.Port, ready, "sockperf", "sr", "--tcp", "-i", "0.0.0.0", "-p", strconv.Itoa(p.Port))
}

// Run implements workload.Workload.
func (Sockperf) Run(ctx context.Context, p workload.Params, addr netip.AddrPort) (workload.Report, error) {
	out, err := runTool(ctx, "sockperf", "pp", "--tcp", "--full-rtt", "-i", addr.Addr().String(),
		"-p", strconv.Itoa(int(addr.Port())), "-t", strconv.Itoa(int(p.Duration.Round(time.Second).Seconds())),
		"-m", strconv.Itoa(p.MessageSize))
	if err != nil {
		return workload.Report{}, err
	}
	return ParseSockperf(out)
}

var (
	ansi       = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	validRe    = regexp.MustCompile(`\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)`)
	pctRe      = regexp.MustCompile(`---> percentile ([0-9.]+) =\s*([0-9.]+)`)
	maxRe      = regexp.MustCompile(`---> <MAX> observation =\s*([0-9.]+)`)
	avgRe      = regexp.MustCompile(`avg-(?:latency|rtt)=([0-9.]+)`)
	sockperfPc = map[string]string{"50.000": "p50", "90.000": "p90", "99.000": "p99", "99.900": "p99.9"}
)

// ParseSockperf reads sockperf pp's summary: the valid-duration counts and
// the percentile lines (usec). Extra carries the percentiles, keyed as ours.
func ParseSockperf(out []byte) (workload.Report, error) {
	s := ansi.ReplaceAllString(string(out), "")
	m := validRe.FindStringSubmatch(s)
	if m == nil {
		return workload.Report{}, fmt.Errorf("reading sockperf output: no [Valid Duration] line")
	}
	secs, _ := strconv.ParseFloat(m[1], 64)
	recv, _ := strconv.ParseInt(m[3], 10, 64)
	r := workload.Report{Transactions: recv, Seconds: secs, Extra: map[string]float64{}}
	for _, pm := range pctRe.FindAllStringSubmatch(s, -1) {
		if key, ok := sockperfPc[pm[1]]; ok {
			v, _ := strconv.ParseFloat(pm[2], 64)
			r.Extra[key] = v
		}
	}
	if mm := maxRe.FindStringSubmatch(s); mm != nil {
		r.Extra["max"], _ = strconv.ParseFloat(mm[1], 64)
	}
	if am := avgRe.FindStringSubmatch(s); am != nil {
		r.Extra["mean"], _ = strconv.ParseFloat(am[1], 64)
	}
	if recv == 0 || secs == 0 {
		return r, fmt.Errorf("sockperf completed no round trip")
	}
	return r, nil
}

// Metrics implements workload.Workload.
func (Sockperf) Metrics(_ workload.Params, c, _ workload.Report) (result.Metrics, string, error) {
	lat := map[string]float64{}
	for k, v := range c.Extra {
		lat[k] = v
	}
	_ = hist.Percentiles // same keys as cnperf's own rr workloads
	return result.Metrics{
		TransactionsPerS: result.F(float64(c.Transactions) / c.Seconds),
		Transactions:     result.I(c.Transactions),
		LatencyUs:        lat,
		DurationS:        result.F(c.Seconds),
	}, "", nil
}
