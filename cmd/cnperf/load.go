package main

import (
	"context"
	"errors"
	"flag"
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

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/httpserver"
	"github.com/cnperf/cnperf/internal/loadgen"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

const loadUsage = `usage: cnperf load http_rate|http_qps|tcp_rate URL-or-ADDR [flags]
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

// loadWorkloads are the workloads `cnperf load` runs on its own: those
// that run in steps (rate ladders, max-rate search) against any address.
func loadWorkloads() []string {
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

func isLoadWorkload(name string) bool { return slices.Contains(loadWorkloads(), name) }

// plainLoadWorkloads run once, as a client of `cnperf load serve NAME`: the
// engine's other halves, to be held against sockperf and iperf3 outside a
// lab (scripts/bench-load.sh).
var plainLoadWorkloads = []string{"tcp_rr", "tcp_stream"}

func cmdLoad(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Println(loadUsage)
		if len(args) == 0 {
			return errors.New("name a workload and a target; see above")
		}
		return nil
	}
	if args[0] == "serve" {
		return cmdLoadServe(args[1:])
	}
	if args[0] == "pace" {
		return cmdLoadPace(args[1:])
	}
	name := args[0]
	if !isLoadWorkload(name) && !slices.Contains(plainLoadWorkloads, name) {
		return fmt.Errorf("workload %q; use one of %s", name, strings.Join(append(loadWorkloads(), plainLoadWorkloads...), ", "))
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return fmt.Errorf("name the target: cnperf load %s http://HOST:PORT/PATH (tcp_rate: HOST:PORT)", name)
	}
	target := args[1]
	fs := newFlags("load " + name)
	duration := fs.Duration("duration", 5*time.Second, "length of each step")
	msgSize := fs.Int("message-size", 0, "tcp_rate, tcp_rr request size, tcp_stream write size, in bytes (defaults 16, 16, 256)")
	jsonOut := fs.String("json", "", "also write the results as cnperf/run/v1 JSON to this file")
	hgrm := fs.String("hgrm", "", "write each step's latency distribution as HdrHistogram .hgrm files into this folder")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	// the options the load workloads declare, but --server: the target
	// is the server
	extra := map[string]*string{}
	for _, f := range workload.Flags() {
		if f.Name == "server" || !slices.ContainsFunc(workload.Takers(f.Name), isLoadWorkload) {
			continue
		}
		if f.Bool {
			extra[f.Name] = boolFlag(fs, f.Name, f.Usage)
			continue
		}
		extra[f.Name] = fs.String(f.Name, "", f.Usage)
	}
	if err := parseFlags(fs, args[2:]); err != nil {
		return err
	}
	w, err := workload.Get(name)
	if err != nil {
		return err
	}
	p := workload.Params{Duration: *duration, MessageSize: *msgSize, Extra: map[string]string{}}
	for k, v := range extra {
		if *v != "" {
			p.Extra[k] = *v
		}
	}
	if err := workload.ValidateExtra([]string{name}, p.Extra); err != nil {
		return err
	}
	addr, err := resolveTarget(workload.IsHTTP(w), target, &p)
	if err != nil {
		return err
	}
	w.Defaults(&p)
	if err := w.Validate(p); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	run := &result.Run{Schema: result.Schema, Version: version, StartedAt: time.Now().UTC(), Command: os.Args,
		Environment: result.CaptureHost()}
	run.Environment.Backend = "standalone"
	release, held, err := holdCPULatency(*cpuLatency, os.Stderr)
	if err != nil {
		return err
	}
	defer release()
	run.Environment.CPULatencyUs = held
	if held != nil {
		fmt.Printf("cpu wake-up bound held: %d µs (PM QoS, --cpu-latency)\n", *held)
	}
	// the same step loop as every experiment's cells
	experiment.Steps(w, p, func() bool { return ctx.Err() != nil }, func(sp workload.Params, label string) workload.StepResult {
		res, rerr := loadStep(ctx, w, sp, addr, label)
		res.Path = target
		run.Results = append(run.Results, res)
		if rerr != nil && ctx.Err() == nil {
			fmt.Printf("  error: %v\n", rerr)
		}
		return workload.StepResult{Params: sp, Metrics: res.Metrics, Err: rerr}
	})
	run.FinishedAt = time.Now().UTC()
	report.MaxRates(os.Stdout, run.Results)
	if *hgrm != "" {
		files, err := report.WriteHgrm(*hgrm, run)
		if err != nil {
			return err
		}
		fmt.Printf("\nwrote %d .hgrm files to %s\n", len(files), *hgrm)
	}
	if *jsonOut != "" {
		if err := run.Write(*jsonOut); err != nil {
			return err
		}
		fmt.Printf("results: %s\n", *jsonOut)
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

// holdCPULatency applies --cpu-latency: "off" holds nothing, "auto" holds
// 0 µs where the kernel offers /dev/cpu_dma_latency (a note on log where it
// does not), a number holds that bound or fails. It returns the release
// func and the bound held (nil when none), as recorded in
// environment.cpu_latency_us.
func holdCPULatency(spec string, log io.Writer) (release func(), held *int, err error) {
	nop := func() {}
	switch spec {
	case "off":
		return nop, nil, nil
	case "auto", "":
		rel, err := pmqos.Hold(0)
		if err != nil {
			if log != nil {
				fmt.Fprintf(log, "note: no CPU latency bound held (%v); round trips include idle-state exits\n", err)
			}
			return nop, nil, nil
		}
		zero := 0
		return rel, &zero, nil
	}
	us, err := strconv.Atoi(spec)
	if err != nil || us < 0 {
		return nop, nil, fmt.Errorf("--cpu-latency %q: want microseconds, off or auto", spec)
	}
	rel, err := pmqos.Hold(us)
	if err != nil {
		return nop, nil, err
	}
	return rel, &us, nil
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

func loadStep(ctx context.Context, w workload.Workload, p workload.Params, addr netip.AddrPort, label string) (result.Result, error) {
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
	fmt.Printf("%s %s %s for %v\n", w.Name(), addr, what, p.Duration)
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
		fmt.Printf("  %.3f Gbit/s: %d bytes in %.3f s, %d writes of %d B\n", *m.ThroughputBps/1e9, rep.Bytes, rep.Seconds, rep.Messages, p.MessageSize)
		if rep.Bytes > 0 {
			fmt.Printf("  client CPU: %.2f s/s, %.4f ns per byte\n", rep.CPUSeconds/rep.Seconds, rep.CPUSeconds/float64(rep.Bytes)*1e9)
		}
		return res, nil
	}
	if !isLoadWorkload(w.Name()) { // tcp_rr: one transaction in flight
		l := m.LatencyUs
		fmt.Printf("  %.0f transactions/s: %d in %.3f s, %d errors\n", *m.TransactionsPerS, rep.Transactions, rep.Seconds, rep.Errors)
		fmt.Printf("  latency (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", l["p50"], l["p90"], l["p99"], l["p99.9"], l["max"])
		if rep.Transactions > 0 {
			fmt.Printf("  client CPU: %.2f s/s, %.2f us per transaction\n", rep.CPUSeconds/rep.Seconds, rep.CPUSeconds/float64(rep.Transactions)*1e6)
		}
		return res, nil
	}
	report.LoadStep(os.Stdout, res, rep.CPUSeconds)
	return res, nil
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func cmdLoadServe(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("name the server: cnperf load serve http|tcp|nginx|tcp_rr|tcp_stream [--port 8080]")
	}
	kind := args[0]
	fs := newFlags("load serve " + kind)
	port := fs.Int("port", 8080, "TCP port to listen on")
	size := fs.Int("response-size", 350, "response bytes on the wire (http, nginx: headers count 250 of them)")
	msg := fs.Int("message-size", 16, "tcp, tcp_rr: request size in bytes")
	duration := fs.Duration("duration", time.Hour, "stop after this long")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	addr := fmt.Sprintf(":%d", *port)
	switch kind {
	case "http", "tcp":
		var s *httpserver.Server
		var err error
		if kind == "http" {
			s, err = httpserver.ListenHTTP(addr, *size)
		} else {
			s, err = httpserver.ListenRaw(addr, *msg, *size)
		}
		if err != nil {
			return err
		}
		fmt.Printf("serving %s on %s (%d B responses); Ctrl-C stops\n", kind, s.Addr(), *size)
		s.Serve(ctx)
	case "nginx":
		if *size <= httpserver.HeaderSize {
			return fmt.Errorf("--response-size %d: nginx needs more than %d bytes (headers)", *size, httpserver.HeaderSize)
		}
		dir, err := os.MkdirTemp("", "cnperf-nginx-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		_ = os.Chmod(dir, 0o755)
		s, err := nginx.Start(ctx, nginx.Options{Dir: dir, Port: *port, BodySize: *size - httpserver.HeaderSize})
		if err != nil {
			return err
		}
		fmt.Printf("serving nginx (pid %d) on :%d, config %s/nginx.conf; Ctrl-C stops\n", s.PID(), *port, dir)
		<-ctx.Done()
		s.Stop()
	case "tcp_rr", "tcp_stream":
		// the workload's own server half, as the agent runs it in a lab
		w, err := workload.Get(kind)
		if err != nil {
			return err
		}
		p := workload.Params{Port: *port, MessageSize: *msg, Duration: *duration, Extra: map[string]string{}}
		w.Defaults(&p)
		p.MessageSize = *msg
		if err := w.Validate(p); err != nil {
			return err
		}
		_, err = w.Serve(ctx, p, func() {
			fmt.Printf("serving %s on :%d (%d B messages); Ctrl-C stops\n", kind, *port, p.MessageSize)
		})
		return err
	default:
		return fmt.Errorf("server %q; use http, tcp, nginx, tcp_rr or tcp_stream", kind)
	}
	return nil
}

// optBool is a workload switch: unset (""), or "true"/"false" once given,
// so that --max-rate-search alone works and an absent flag stays absent.
type optBool struct{ s *string }

func (b optBool) String() string {
	if b.s == nil {
		return ""
	}
	return *b.s
}

func (b optBool) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*b.s = strconv.FormatBool(x)
	return nil
}

func (b optBool) IsBoolFlag() bool { return true }

func boolFlag(fs *flag.FlagSet, name, usage string) *string {
	s := new(string)
	fs.Var(optBool{s}, name, usage)
	return s
}

// cmdLoadPace runs the open-loop schedule with no I/O (loadgen.Config.Pace)
// and prints the send lag the platform alone allows at each rate: the
// floor under any http_rate/tcp_rate result on the same CPUs. Pin it the
// way the client will be pinned (taskset) to read the floor that client
// stands on.
func cmdLoadPace(args []string) error {
	fs := newFlags("load pace")
	rates := fs.String("rate", "", "rates to probe, requests per second: a number or a list (10000,50000)")
	threads := fs.Int("threads", 1, "worker threads, as the client would use")
	duration := fs.Duration("duration", 2*time.Second, "length of each step")
	maxLag := fs.Duration("max-send-lag", time.Millisecond, "send-lag p99 above which a step does not hold its rate")
	realtime := boolFlag(fs, "realtime", "run the worker threads under SCHED_FIFO, as --realtime does for the client")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run (µs, off or auto)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rates == "" {
		return errors.New("name the rates to probe: cnperf load pace --rate 10000,50000")
	}
	var list []uint64
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || r == 0 {
			return fmt.Errorf("--rate %q: want positive whole numbers per second, e.g. 10000,50000", *rates)
		}
		list = append(list, r)
	}
	if *threads <= 0 || *duration <= 0 {
		return errors.New("--threads and --duration must be positive")
	}
	release, held, err := holdCPULatency(*cpuLatency, os.Stderr)
	if err != nil {
		return err
	}
	defer release()
	if held != nil {
		fmt.Printf("cpu wake-up bound held: %d µs (PM QoS, --cpu-latency)\n", *held)
	}
	ctx, stop := interruptible()
	defer stop()
	for _, rate := range list {
		c := loadgen.Config{Pace: true, Rate: rate, Duration: *duration, Connections: *threads, Threads: *threads,
			MaxSendLag: *maxLag, Realtime: *realtime != ""}
		r, err := loadgen.Run(ctx, c)
		if err != nil {
			return err
		}
		l := r.SendLag
		fmt.Printf("pace rate=%d threads=%d for %v: %d sends\n", rate, *threads, *duration, l.Count())
		fmt.Printf("  send lag (us):    p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
			us(l.Quantile(50)), us(l.Quantile(99)), us(l.Quantile(99.9)), us(l.Max()))
		if sat, why := r.Saturated(*maxLag); sat {
			fmt.Printf("  verdict: the platform alone does not hold this rate: %s\n", why)
		} else {
			fmt.Printf("  verdict: rate held\n")
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }
