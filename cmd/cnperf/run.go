package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	_ "github.com/cnperf/cnperf/internal/backend/all" // the backends
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
)

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// buildCases turns --networks and --placement into cases on the lab;
// baseline rows are added for every placement so that each figure has its
// ratio.
func buildCases(networks, placements []string, noBaseline bool) ([]plan.Case, error) {
	return plan.Cases(plan.LabPlacer{}, networks, placements, noBaseline)
}

// runSetup is what `cnperf run`'s flags ask for: the plan, checked, and
// the flags used after it is made.
type runSetup struct {
	plan       plan.Plan
	out        string
	html, csv  string // --html, --csv
	cpuLatency string
	quiet      bool
}

// parseRun turns `cnperf run`'s arguments into a checked plan. It builds
// and writes nothing.
func parseRun(args []string) (*runSetup, error) {
	fs := newFlags("run")
	var r plan.Request
	fs.StringVar(&r.Backend, "backend", backend.Names()[0], backend.Usage())
	beFlags := backendFlags(fs, false)
	fs.StringVar(&r.Suite, "suite", "default", "preset to run (see cnperf suites); --networks/--workloads/--placement override it")
	fs.BoolVar(&r.Quick, "quick", false, "the suite's short version (fewer rounds, sizes, pods or networks, shorter cells): under 2 minutes on a 2-CPU machine")
	fs.StringVar(&r.Networks, "networks", "", "comma-separated networks (default: the suite's; see cnperf networks)")
	fs.StringVar(&r.Workloads, "workloads", "", "comma-separated workloads (default: the suite's; see cnperf workloads)")
	fs.StringVar(&r.Placements, "placement", "", "same-pod, same-host or cross-host, comma-separated (default: each network's natural one)")
	fs.DurationVar(&r.Duration, "duration", 0, "how long each measurement runs (default: the suite's, 5s)")
	fs.StringVar(&r.MessageSize, "message-size", "", "message size in bytes (default: 16 for rr, 256 for tcp_stream, 1024 for udp_stream); a list (64,256,1024,4096,16384,65536) sweeps the stream and rr workloads, one result per size")
	fs.StringVar(&r.Direction, "direction", "", "stream direction: up (client sends) or down (server sends)")
	fs.IntVar(&r.MTU, "mtu", 1500, "underlay MTU")
	fs.IntVar(&r.Repeat, "repeat", 0, "interleaved rounds: every cell runs once per round, in an order that changes from round to round (default 1)")
	out := fs.String("out", "", "results JSON path (default: cnperf-results/run-<time>.json)")
	htmlOut := fs.String("html", "", "also write the report as a self-contained HTML page (see cnperf report --html)")
	csvDir := fs.String("csv", "", "also write the results as CSV files into this folder (see cnperf report --csv)")
	fs.BoolVar(&r.NoBaseline, "no-baseline", false, "do not add the baseline rows")
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.StringVar(&r.LBs, "lb", "", "ClusterIP load balancers, comma-separated: iptables, nftables, ipvs, ebpf-socket, ebpf-tc, none (the pod IP directly)")
	fs.StringVar(&r.Services, "services", "", "with --lb: numbers of services to program, comma-separated scale steps (default 1)")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	fs.StringVar(&r.Pin, "pin", "", "pin the client and server agents to CPUs, e.g. 0,1 (steadier numbers on a busy machine)")
	r.ModeOptions = map[string]string{}
	fs.Func("mode-opt", "network-mode option key=value, repeatable or comma-separated (e.g. controlplane=off, encrypt=aes-gcm)", func(s string) error {
		for _, kv := range splitList(s) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("mode option %q; use key=value", kv)
			}
			r.ModeOptions[k] = v
		}
		return nil
	})
	// the experiments' own options, each a flag (--parallel, --pods...)
	opts := map[string]*string{}
	for _, o := range experiment.Options() {
		if fs.Lookup(o.Name) == nil {
			opts[o.Name] = fs.String(o.Name, "", o.Help)
		}
	}
	extra := map[string]*string{}
	for _, f := range workload.Flags() {
		if f.Bool {
			extra[f.Name] = boolFlag(fs, f.Name, f.Usage)
			continue
		}
		extra[f.Name] = fs.String(f.Name, "", f.Usage)
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := explicitValues(fs); err != nil {
		return nil, err
	}
	r.Options, r.Extra, r.BackendFlags = setValues(fs, opts), setValues(fs, extra), setValues(fs, beFlags)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r.Agent = []string{self, "agent"}
	p, err := plan.Build(r)
	if err != nil {
		return nil, err
	}
	return &runSetup{plan: *p, out: *out, html: *htmlOut, csv: *csvDir, cpuLatency: *cpuLatency, quiet: *quiet}, nil
}

// setValues are the values of flags the user set, by name.
func setValues(fs *flag.FlagSet, flags map[string]*string) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if v, ok := flags[f.Name]; ok {
			out[f.Name] = *v
		}
	})
	return out
}

func cmdRun(args []string) error {
	setup, err := parseRun(args)
	if err != nil {
		return err
	}
	_, _, err = execute(setup, 0)
	return err
}

// errTimeLimit ends a run that reached the limit execute was given: what
// was measured is written, the lab torn down.
var errTimeLimit = errors.New("time limit reached")

// execute runs a checked setup, as `cnperf run` does: it builds, measures,
// writes the run file after every cell, prints the table and the --html
// and --csv outputs, and tears down. With limit above 0 the run stops
// after that long (errTimeLimit, the run file written with what was
// measured). It returns the run and its file.
func execute(setup *runSetup, limit time.Duration) (*result.Run, string, error) {
	plan := setup.plan
	if !setup.quiet {
		plan.Log = os.Stderr
	}
	// a run on a cluster alone builds nothing on this machine
	if plan.BuildsHere() {
		if err := preflight(); err != nil {
			return nil, "", err
		}
	}
	if err := plan.CheckBuildable(); err != nil {
		return nil, "", err
	}
	// before the results folder is made: a bad value leaves nothing
	release, held, err := holdCPULatency(setup.cpuLatency, plan.Log)
	if err != nil {
		return nil, "", err
	}
	defer release()
	path, err := resultsPath(setup.out)
	if err != nil {
		return nil, "", err
	}
	plan.Out = path
	if setup.html != "" {
		if err := checkOutFile("--html", setup.html); err != nil {
			return nil, "", err
		}
	}

	ctx, stop := interruptible()
	defer stop()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	run := &result.Run{
		Schema: result.Schema, Version: version, StartedAt: time.Now().UTC(),
		Command: os.Args, Environment: result.CaptureHost(),
	}
	run.Environment.CPULatencyUs = held
	run.Environment.Tools = toolVersions()
	execErr := runner.Execute(ctx, plan, run)
	run.FinishedAt = time.Now().UTC()
	if len(run.Results) > 0 || execErr == nil {
		run.Incomplete = execErr != nil
		if err := run.WriteAtomic(path); err != nil {
			return nil, "", err
		}
		fmt.Println()
		report.Table(os.Stdout, run) // ends with the run's warnings
		fmt.Printf("\nresults: %s\n", path)
		if err := writeOutputs(setup.html, setup.csv, []report.Input{report.NewInput(path, run)}); err != nil {
			return nil, "", err
		}
	}
	switch {
	case limit > 0 && ctx.Err() == context.DeadlineExceeded:
		return run, path, errTimeLimit
	case errors.Is(execErr, context.Canceled) || errors.Is(execErr, context.DeadlineExceeded):
		return run, path, fmt.Errorf("interrupted; the lab was torn down%s", partial(len(run.Results), path))
	}
	return run, path, execErr
}

// resultsPath checks where the results go before anything is built: the
// default folder is created; a folder the user named must exist, and the
// file must be one that can be replaced.
func resultsPath(out string) (string, error) {
	path := out
	if path == "" {
		path = filepath.Join("cnperf-results", "run-"+time.Now().Format("20060102-150405")+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("results folder: %w", err)
		}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("--out %s: folder %s does not exist; create it first or choose another path", out, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("--out %s: not a regular file; choose a file path such as results.json", out)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && (real == "/proc" || strings.HasPrefix(real, "/proc/") || real == "/sys" || strings.HasPrefix(real, "/sys/")) {
		return "", fmt.Errorf("--out %s: cannot write results under %s; choose a file in an ordinary folder", out, real)
	}
	f, err := os.CreateTemp(dir, ".cnperf-probe-*")
	if err != nil {
		return "", fmt.Errorf("--out %s: cannot write in %s (%v); choose a writable folder", out, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return path, nil
}

// explicitValues refuses what a user typed that would silently mean
// something else: a list flag given with no item in it (--networks ,), a
// zero that would mean "the default" (--duration 0, --repeat 0).
func explicitValues(fs *flag.FlagSet) error {
	lists := map[string]string{"networks": "host,vxlan", "workloads": "tcp_rr,tcp_stream", "placement": "cross-host",
		"lb": "iptables,ebpf-socket", "services": "1,10000", "pin": "0,1", "pods": "2,4,8", "spread": "balanced", "neighbours": "busy:5", "mode-opt": "key=value", "tuning": "none,study"}
	zeros := map[string]string{"duration": "5s", "message-size": "1024", "repeat": "3", "startup-pods": "10", "parallel": "4", "mtu": "1500"}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := f.Value.String()
		if eg, ok := lists[f.Name]; ok && f.Name != "mode-opt" && len(splitList(v)) == 0 {
			err = fmt.Errorf("--%s %q names nothing; give at least one, e.g. --%s %s, or leave it out for the default", f.Name, v, f.Name, eg)
		}
		if _, isList := lists[f.Name]; !isList && f.Name != "mode-opt" && strings.TrimSpace(v) == "" {
			err = fmt.Errorf("--%s %q is empty; give a value (see `cnperf run -h`) or leave it out for the default", f.Name, v)
		}
		if eg, ok := zeros[f.Name]; ok && (v == "0" || v == "0s") {
			err = fmt.Errorf("--%s 0: use a positive value, e.g. --%s %s, or leave it out for the default", f.Name, f.Name, eg)
		}
	})
	return err
}

func partial(n int, path string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d results so far are in %s", n, path)
}

// preflight checks what every run needs, before anything is built.
func preflight() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root to create network namespaces; run it as root (sudo cnperf run ...)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("needs the ip command; install it (apt-get install iproute2)")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return errors.New("this kernel has no network namespaces (CONFIG_NET_NS); cnperf's lab needs them")
	}
	return nil
}

func toolVersions() map[string]string {
	m := map[string]string{}
	if out, err := exec.Command("ip", "-V").Output(); err == nil {
		m["iproute2"] = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("iptables", "-V").Output(); err == nil {
		m["iptables"] = strings.TrimSpace(string(out))
	}
	return m
}

// backendFlags registers every backend's own flags (--kubeconfig...):
// with clean, only those clean takes.
func backendFlags(fs *flag.FlagSet, clean bool) map[string]*string {
	out := map[string]*string{}
	for _, i := range backend.All() {
		for _, f := range i.Flags {
			if _, dup := out[f.Name]; dup || (clean && !slices.Contains(i.CleanFlags, f.Name)) {
				continue
			}
			out[f.Name] = fs.String(f.Name, f.Default, f.Help)
		}
	}
	return out
}
