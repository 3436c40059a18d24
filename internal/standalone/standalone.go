// Package standalone runs cnperf's load engine outside a lab: a stepped
// workload (rate ladders, the max-rate search) against any address, the
// built-in fixed-size servers (or nginx, configured as the study did) for
// other tools to be measured against, and the platform's pacing floor.
// `cnperf load` is its command line.
package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/httpserver"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/tmpdir"
	"github.com/cnperf/cnperf/internal/workload"
)

// ServerKinds are what `cnperf load serve` serves.
var ServerKinds = []string{"http", "tcp", "nginx", "tcp_rr", "tcp_stream"}

// PlainWorkloads run once, as a client of `cnperf load serve NAME`: the
// engine's other halves, to be held against sockperf and iperf3 outside a
// lab (scripts/bench-load.sh).
var PlainWorkloads = []string{"tcp_rr", "tcp_stream"}

// Workloads are the workloads that run on their own: those that run in
// steps (rate ladders, max-rate search) against any address.
func Workloads() []string {
	var out []string
	for _, n := range workload.Names() {
		if w, err := workload.Get(n); err == nil {
			if _, ok := w.(workload.Stepper); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// Job is a stepped workload aimed at a target, checked.
type Job struct {
	w      workload.Workload
	target string
	addr   netip.AddrPort
	p      workload.Params
}

// CheckArgs checks `cnperf load NAME TARGET`'s first two arguments: a
// workload that runs on its own, and a target.
func CheckArgs(args []string) error {
	name := args[0]
	if !slices.Contains(Workloads(), name) && !slices.Contains(PlainWorkloads, name) {
		return fmt.Errorf("workload %q; use one of %s", name, strings.Join(append(Workloads(), PlainWorkloads...), ", "))
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		example := "http://HOST:PORT/PATH"
		if w, err := workload.Get(name); err == nil && !workload.IsHTTP(w) {
			example = "HOST:PORT"
		}
		return fmt.Errorf("name the target: cnperf load %s %s", name, example)
	}
	return nil
}

// NewJobOf is NewJob for workload name with a step's duration, message
// size (0: the workload's) and the workload's own options given.
func NewJobOf(name, target string, d time.Duration, size int, extra map[string]string) (*Job, error) {
	w, err := workload.Get(name)
	if err != nil {
		return nil, err
	}
	p := workload.Params{Duration: d, MessageSize: size, Extra: map[string]string{}}
	for k, v := range extra {
		if v != "" {
			p.Extra[k] = v
		}
	}
	return NewJob(w, target, p)
}

// NewJob checks workload w with params p against target (a URL for an
// HTTP workload, else HOST:PORT) and resolves the target, before
// anything runs.
func NewJob(w workload.Workload, target string, p workload.Params) (*Job, error) {
	if err := workload.ValidateExtra([]string{w.Name()}, p.Extra); err != nil {
		return nil, err
	}
	addr, err := resolveTarget(workload.IsHTTP(w), target, &p)
	if err != nil {
		return nil, err
	}
	w.Defaults(&p)
	if err := w.Validate(p); err != nil {
		return nil, err
	}
	return &Job{w: w, target: target, addr: addr, p: p}, nil
}

// Run runs the job step by step, as every experiment's cells do, printing
// each step on out, and adds the results to run. It stops when ctx ends.
func (j *Job) Run(ctx context.Context, run *result.Run, out io.Writer) {
	experiment.Steps(j.w, j.p, func() bool { return ctx.Err() != nil }, func(sp workload.Params, label string) workload.StepResult {
		res, rerr := loadStep(ctx, j.w, sp, j.addr, label, out)
		res.Path = j.target
		run.Results = append(run.Results, res)
		if rerr != nil && ctx.Err() == nil {
			fmt.Fprintf(out, "  error: %v\n", rerr)
		}
		return workload.StepResult{Params: sp, Metrics: res.Metrics, Err: rerr}
	})
}

// resolveTarget turns the user's URL or address into the address dialled,
// keeping the URL's host and path for the HTTP request.
func resolveTarget(isURL bool, target string, p *workload.Params) (netip.AddrPort, error) {
	hostport := target
	if isURL {
		hp, path, err := loadgen.ParseURL(target)
		if err != nil {
			return netip.AddrPort{}, err
		}
		hostport = hp
		p.Extra["path"] = path
		p.Extra["host"] = hp
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("target %q: use HOST:PORT", target)
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil || pn == 0 {
		return netip.AddrPort{}, fmt.Errorf("target %q: bad port", target)
	}
	ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip4", host)
	if err != nil || len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("target %q: no IPv4 address for %s", target, host)
	}
	return netip.AddrPortFrom(ips[0].Unmap(), uint16(pn)), nil
}

func loadStep(ctx context.Context, w workload.Workload, p workload.Params, addr netip.AddrPort, label string, out io.Writer) (result.Result, error) {
	res := result.Result{Network: "standalone", Workload: w.Name(), Placement: "-", Step: label,
		Params: map[string]any{"duration_s": p.Duration.Seconds(), "message_size": p.MessageSize}}
	for k, v := range p.Extra {
		res.Params[k] = v
	}
	what := label
	if what == "" {
		what = "closed loop"
		if r := p.Extra["rate"]; r != "" {
			what = "rate=" + r
		}
	}
	fmt.Fprintf(out, "%s %s %s for %v\n", w.Name(), addr, what, p.Duration)
	cpu0 := cpuTime()
	rep, err := w.Run(ctx, p, addr)
	rep.CPUSeconds = cpuTime() - cpu0
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	srv := workload.Report{}
	if workload.IsBulk(w) {
		// the client sent it all and waited for the server to read it
		// (tcp_stream): what it sent is what was received
		srv = rep
	}
	m, h, err := w.Metrics(p, rep, srv)
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	m.ClientCPUSPerS = result.F(rep.CPUSeconds / p.Duration.Seconds())
	res.Metrics, res.Histogram = m, h
	if workload.IsBulk(w) {
		fmt.Fprintf(out, "  %.3f Gbit/s: %d bytes in %.3f s, %d writes of %d B\n", *m.ThroughputBps/1e9, rep.Bytes, rep.Seconds, rep.Messages, p.MessageSize)
		if rep.Bytes > 0 {
			fmt.Fprintf(out, "  client CPU: %.2f s/s, %.4f ns per byte\n", rep.CPUSeconds/rep.Seconds, rep.CPUSeconds/float64(rep.Bytes)*1e9)
		}
		return res, nil
	}
	if !slices.Contains(Workloads(), w.Name()) { // tcp_rr: one transaction in flight
		l := m.LatencyUs
		fmt.Fprintf(out, "  %.0f transactions/s: %d in %.3f s, %d errors\n", *m.TransactionsPerS, rep.Transactions, rep.Seconds, rep.Errors)
		fmt.Fprintf(out, "  latency (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", l["p50"], l["p90"], l["p99"], l["p99.9"], l["max"])
		if rep.Transactions > 0 {
			fmt.Fprintf(out, "  client CPU: %.2f s/s, %.2f us per transaction\n", rep.CPUSeconds/rep.Seconds, rep.CPUSeconds/float64(rep.Transactions)*1e6)
		}
		return res, nil
	}
	LoadStep(out, res, rep.CPUSeconds)
	return res, nil
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// Serve runs a server of kind http, tcp or nginx on port until ctx ends:
// size bytes on the wire per response (headers included), msg the tcp
// server's request size.
func Serve(ctx context.Context, kind string, port, size, msg int, out io.Writer) error {
	addr := fmt.Sprintf(":%d", port)
	switch kind {
	case "http", "tcp":
		var s *httpserver.Server
		var err error
		if kind == "http" {
			s, err = httpserver.ListenHTTP(addr, size)
		} else {
			s, err = httpserver.ListenRaw(addr, msg, size)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "serving %s on %s (%d B responses); Ctrl-C stops\n", kind, s.Addr(), size)
		s.Serve(ctx)
	case "nginx":
		if size <= httpserver.HeaderSize {
			return fmt.Errorf("--response-size %d: nginx needs more than %d bytes (headers)", size, httpserver.HeaderSize)
		}
		dir, err := tmpdir.Make("nginx")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		_ = os.Chmod(dir, 0o755)
		s, err := nginx.Start(ctx, nginx.Options{Dir: dir, Port: port, BodySize: size - httpserver.HeaderSize})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "serving nginx (pid %d) on :%d, config %s/nginx.conf; Ctrl-C stops\n", s.PID(), port, dir)
		<-ctx.Done()
		s.Stop()
	case "tcp_rr", "tcp_stream":
		// the workload's own server half, as the agent runs it in a lab
		w, err := workload.Get(kind)
		if err != nil {
			return err
		}
		p := workload.Params{Port: port, MessageSize: msg, Duration: time.Hour, Extra: map[string]string{}}
		if dl, ok := ctx.Deadline(); ok {
			p.Duration = time.Until(dl)
		}
		w.Defaults(&p)
		p.MessageSize = msg
		if err := w.Validate(p); err != nil {
			return err
		}
		_, err = w.Serve(ctx, p, func() {
			fmt.Fprintf(out, "serving %s on :%d (%d B messages); Ctrl-C stops\n", kind, port, p.MessageSize)
		})
		return err
	default:
		return exitcode.With(fmt.Errorf("unknown server %q; use %s", kind, strings.Join(ServerKinds, ", ")), exitcode.Usage)
	}
	return nil
}

// Pace runs the open-loop schedule with no I/O (loadgen.Config.Pace) at
// each rate of rateList (comma-separated), holding the CPU latency bound
// cpuLatency, and prints the send lag the platform alone allows: the floor
// under any http_rate/tcp_rate result on the same CPUs. Pin it the way the
// client will be pinned (taskset) to read the floor that client stands on.
func Pace(ctx context.Context, rateList string, threads int, duration, maxLag time.Duration, realtime bool, cpuLatency string, out, log io.Writer) error {
	if rateList == "" {
		return exitcode.With(errors.New("name the rates to probe: cnperf load pace --rate 10000,50000"), exitcode.Usage)
	}
	var rates []uint64
	for _, f := range strings.Split(rateList, ",") {
		r, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || r == 0 {
			return exitcode.With(fmt.Errorf("--rate %q: want positive whole numbers per second, e.g. 10000,50000", rateList), exitcode.Usage)
		}
		rates = append(rates, r)
	}
	if threads <= 0 || duration <= 0 {
		return exitcode.With(errors.New("--threads and --duration must be positive; use e.g. --threads 1 --duration 2s"), exitcode.Usage)
	}
	release, held, err := pmqos.HoldSpec(cpuLatency, log)
	if err != nil {
		return err
	}
	defer release()
	if held != nil {
		fmt.Fprintf(out, "cpu wake-up bound held: %d µs (PM QoS, --cpu-latency)\n", *held)
	}
	for _, rate := range rates {
		c := loadgen.Config{Pace: true, Rate: rate, Duration: duration, Connections: threads, Threads: threads,
			MaxSendLag: maxLag, Realtime: realtime}
		r, err := loadgen.Run(ctx, c)
		if err != nil {
			return err
		}
		l := r.SendLag
		fmt.Fprintf(out, "pace rate=%d threads=%d for %v: %d sends\n", rate, threads, duration, l.Count())
		fmt.Fprintf(out, "  send lag (us):    p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
			us(l.Quantile(50)), us(l.Quantile(99)), us(l.Quantile(99.9)), us(l.Max()))
		if sat, why := r.Saturated(maxLag); sat {
			fmt.Fprintf(out, "  verdict: the platform alone does not hold this rate: %s\n", why)
		} else {
			fmt.Fprintf(out, "  verdict: rate held\n")
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// Usage is `cnperf load`'s.
const Usage = `usage: cnperf load http_rate|http_qps|tcp_rate URL-or-ADDR [flags]
       cnperf load tcp_rr|tcp_stream HOST:PORT [--message-size N] [--duration 5s]
       cnperf load serve http|tcp|nginx|tcp_rr|tcp_stream [--port 8080] [--response-size 350] [--message-size 16]
       cnperf load pace --rate 10000,50000 [--threads 1] [--duration 2s]   (the platform's floor)

Runs cnperf's load engine against any server, outside a lab:
  cnperf load http_rate http://127.0.0.1:8080/ --rate 20000 --duration 10s
  cnperf load http_rate http://10.0.0.2/ --max-rate-search
  cnperf load http_qps http://127.0.0.1:8080/ --connections 64 --threads 2
  cnperf load tcp_rate 127.0.0.1:5001 --rate 1000 --message-size 16
  cnperf load tcp_rate 127.0.0.1:11111 --rate 1000 --payload sockperf   (a sockperf server)
  cnperf load tcp_rr 127.0.0.1:5001 --message-size 16          (against cnperf load serve tcp_rr)
  cnperf load tcp_stream 127.0.0.1:5002 --message-size 131072  (against cnperf load serve tcp_stream)
and serves cnperf's built-in fixed-size server (or nginx, configured as the
study did) for other tools to be measured against.`

// Options are how Main runs a job: the CPU latency bound it holds, the
// .hgrm folder and JSON file it writes ("" for none), what it records and
// where it prints.
type Options struct {
	CPULatency, Hgrm, JSON string
	Force                  bool // the outputs may replace files of other kinds
	Version                string
	Command                []string
	Out, Log               io.Writer
}

// Main runs the job as `cnperf load` does: it holds the CPU latency
// bound, runs every step, prints the max rates, writes the files asked
// for, and says whether a step failed or the run was cut short.
func (j *Job) Main(ctx context.Context, o Options) error {
	run := &result.Run{Schema: result.Schema, Version: o.Version, StartedAt: time.Now().UTC(), Command: o.Command,
		Environment: result.CaptureHost()}
	run.Environment.Backend = "standalone"
	release, held, err := pmqos.HoldSpec(o.CPULatency, o.Log)
	if err != nil {
		return err
	}
	defer release()
	run.Environment.CPULatencyUs = held
	if held != nil {
		fmt.Fprintf(o.Out, "cpu wake-up bound held: %d µs (PM QoS, --cpu-latency)\n", *held)
	}
	j.Run(ctx, run, o.Out)
	run.FinishedAt = time.Now().UTC()
	MaxRates(o.Out, run.Results)
	if o.Hgrm != "" {
		files, err := report.WriteHgrm(o.Hgrm, run, o.Force)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "\nwrote %d .hgrm files to %s\n", len(files), o.Hgrm)
	}
	if o.JSON != "" {
		if err := run.WriteAtomic(o.JSON); err != nil {
			return fmt.Errorf("--json %s: %w", o.JSON, err)
		}
		fmt.Fprintf(o.Out, "results: %s\n", o.JSON)
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	for _, r := range run.Results {
		if r.Error != "" {
			return errors.New("some steps failed (see above)")
		}
	}
	return nil
}
