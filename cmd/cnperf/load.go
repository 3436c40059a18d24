package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/standalone"
	"github.com/cnperf/cnperf/internal/workload"
)

func isLoadWorkload(name string) bool { return slices.Contains(standalone.Workloads(), name) }

func cmdLoad(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Println(standalone.Usage)
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
	if err := standalone.CheckArgs(args); err != nil {
		return err
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
		extra[f.Name] = option.FlagVar(fs, f.Name, f.Usage, f.Bool)
	}
	if err := parseFlags(fs, args[2:]); err != nil {
		return err
	}
	job, err := standalone.NewJobOf(name, target, *duration, *msgSize, option.Given(fs, extra))
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	return job.Main(ctx, standalone.Options{CPULatency: *cpuLatency, Hgrm: *hgrm, JSON: *jsonOut, Version: version,
		Command: os.Args, Out: os.Stdout, Log: os.Stderr})
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
	return standalone.Serve(ctx, kind, *port, *size, *msg, os.Stdout)
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
	realtime := option.FlagVar(fs, "realtime", "run the worker threads under SCHED_FIFO, as --realtime does for the client", true)
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run (µs, off or auto)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	return standalone.Pace(ctx, *rates, *threads, *duration, *maxLag, *realtime != "", *cpuLatency, os.Stdout, os.Stderr)
}
