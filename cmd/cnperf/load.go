package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/standalone"
	"github.com/cnperf/cnperf/internal/workload"
)

func isLoadWorkload(name string) bool { return slices.Contains(standalone.Workloads(), name) }

// loadCommand is `cnperf load`: a command per workload that runs on its
// own, serve (a command per server) and pace.
func loadCommand() *cli.Command {
	_, long, _ := strings.Cut(standalone.Usage, "\n\n")
	load := &cli.Command{Name: "load", Summary: "run the load engine (http_rate, http_qps, tcp_rate...) against any server, or serve one", Long: long}
	for _, name := range append(standalone.Workloads(), standalone.PlainWorkloads...) {
		args := "URL"
		if !workload.IsHTTP(mustWorkload(name)) {
			args = "HOST:PORT"
		}
		load.Subs = append(load.Subs, &cli.Command{Name: name, Args: args, Summary: "run " + name + " against " + args, Run: cmdLoadRun})
	}
	serve := &cli.Command{Name: "serve", Summary: "serve cnperf's fixed-size servers (or nginx) for other tools to be measured against"}
	for _, kind := range standalone.ServerKinds {
		serve.Subs = append(serve.Subs, &cli.Command{Name: kind, Summary: "serve " + kind + " until --duration or Ctrl-C", Run: cmdLoadServe})
	}
	pace := &cli.Command{Name: "pace", Summary: "the send lag this machine alone allows a paced thread at each rate (no I/O)", Run: cmdLoadPace}
	load.Subs = append(load.Subs, serve, pace)
	return load
}

func mustWorkload(name string) workload.Workload {
	w, err := workload.Get(name)
	if err != nil {
		panic(err)
	}
	return w
}

func cmdLoadRun(c *cli.Ctx) error {
	name := c.Command().Name
	fs := c.Flags()
	duration := fs.Duration("duration", 5*time.Second, "length of each step")
	msgSize := fs.Int("message-size", 0, "tcp_rate, tcp_rr request size, tcp_stream write size, in bytes (defaults 16, 16, 256)")
	jsonOut := fs.String("json", "", "also write the results as cnperf/run/v1 JSON to this file")
	hgrm := fs.String("hgrm", "", "write each step's latency distribution as HdrHistogram .hgrm files into this folder")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	force := fs.Bool("force", false, cli.ForceUsage)
	// the options the load workloads declare, but --server: the target
	// is the server
	extra := map[string]*string{}
	for _, f := range workload.Flags() {
		if f.Name == "server" || !slices.ContainsFunc(workload.Takers(f.Name), isLoadWorkload) {
			continue
		}
		extra[f.Name] = option.FlagVar(fs, f.Name, f.Usage, f.Bool)
	}
	args, err := c.Parse()
	if err != nil {
		return err
	}
	if err := standalone.CheckArgs(append([]string{name}, args...)); err != nil {
		return cli.Usage(err)
	}
	if len(args) > 1 {
		return cli.Usagef("unexpected argument %q: cnperf load %s takes one target; see `cnperf load %s --help`", args[1], name, name)
	}
	if err := checkOut(*jsonOut, *hgrm, *cpuLatency, *force); err != nil {
		return err
	}
	job, err := standalone.NewJobOf(name, args[0], *duration, *msgSize, option.Given(fs, extra))
	if err != nil {
		return cli.Usage(err)
	}
	ctx, stop := interruptible()
	defer stop()
	return job.Main(ctx, standalone.Options{CPULatency: *cpuLatency, Hgrm: *hgrm, JSON: *jsonOut, Force: *force, Version: version,
		Command: os.Args, Out: os.Stdout, Log: os.Stderr})
}

// checkOut applies the output rule to --json and --hgrm (the .hgrm files
// are checked as they are named), and refuses a --cpu-latency that cannot
// be held.
func checkOut(jsonOut, hgrm, cpuLatency string, force bool) error {
	if err := pmqos.CheckSpec(cpuLatency); err != nil {
		return cli.Usage(err)
	}
	return cli.Usage(cli.CheckOutputs(nil, force,
		cli.Output{Flag: "--json", Path: jsonOut, Example: "load.json", Kind: report.ResultsKind},
		cli.Output{Flag: "--hgrm", Path: hgrm, Kind: report.HgrmKind, Dir: true, Match: "*.hgrm"}))
}

func cmdLoadServe(c *cli.Ctx) error {
	kind := c.Command().Name
	fs := c.Flags()
	port := fs.Int("port", 8080, "TCP port to listen on")
	size := fs.Int("response-size", 350, "response bytes on the wire (http, nginx: headers count 250 of them)")
	msg := fs.Int("message-size", 16, "tcp, tcp_rr: request size in bytes")
	duration := fs.Duration("duration", time.Hour, "stop after this long")
	if _, err := c.Parse(); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	return standalone.Serve(ctx, kind, *port, *size, *msg, os.Stdout)
}

// cmdLoadPace runs the open-loop schedule with no I/O (loadgen.Config.Pace)
// and prints the send lag the platform alone allows at each rate: the
// floor under any http_rate/tcp_rate result on the same CPUs. Pin it the
// way the client will be pinned (taskset) to read the floor that client
// stands on.
func cmdLoadPace(c *cli.Ctx) error {
	fs := c.Flags()
	rates := fs.String("rate", "", "rates to probe, requests per second: a number or a list (10000,50000)")
	threads := fs.Int("threads", 1, "worker threads, as the client would use")
	duration := fs.Duration("duration", 2*time.Second, "length of each step")
	maxLag := fs.Duration("max-send-lag", time.Millisecond, "send-lag p99 above which a step does not hold its rate")
	realtime := option.FlagVar(fs, "realtime", "run the worker threads under SCHED_FIFO, as --realtime does for the client", true)
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run (µs, off or auto)")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if err := checkOut("", "", *cpuLatency, false); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	return standalone.Pace(ctx, *rates, *threads, *duration, *maxLag, *realtime != "", *cpuLatency, os.Stdout, os.Stderr)
}
