package main

import (
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	_ "github.com/cnperf/cnperf/internal/backend/all" // the backends
	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/session"
)

// runSetup is what `cnperf run`'s flags ask for: the plan, checked, and
// the flags used after it is made.
type runSetup struct {
	plan       plan.Plan
	out        string
	outputs    report.Outputs // --html, --csv, --openmetrics, --ndjson
	cpuLatency string
	quiet      bool
	dryRun     bool
	force      bool // --force: --out may replace a file that is not cnperf's
}

// parseRun turns `cnperf run`'s arguments into a checked plan. It builds
// and writes nothing.
func parseRun(c *cli.Ctx) (*runSetup, error) {
	fs := c.Flags()
	var r plan.Request
	fs.StringVar(&r.Backend, "backend", backend.Names()[0], backend.Usage())
	beFlags := plan.FlagsOfBackends(fs, false)
	fs.StringVar(&r.Suite, "suite", "default", "preset to run (see cnperf suites); --networks/--workloads/--placement override it")
	fs.BoolVar(&r.Quick, "quick", false, "the suite's short version (fewer rounds, sizes, pods or networks, shorter cells): under 2 minutes on a 2-CPU machine")
	fs.StringVar(&r.Networks, "networks", "", "comma-separated networks (default: the suite's; see cnperf networks)")
	fs.StringVar(&r.Workloads, "workloads", "", "comma-separated workloads (default: the suite's; see cnperf workloads)")
	fs.StringVar(&r.Placements, "placement", "", plan.PlacementUsage())
	fs.DurationVar(&r.Duration, "duration", 0, "how long each measurement runs (default: the suite's, 5s)")
	fs.StringVar(&r.MessageSize, "message-size", "", "message size in bytes (default: 16 for rr, 256 for tcp_stream, 1024 for udp_stream); a list (64,256,1024,4096,16384,65536) sweeps the stream and rr workloads, one result per size")
	fs.StringVar(&r.Direction, "direction", "", "stream direction: up (client sends) or down (server sends)")
	fs.IntVar(&r.MTU, "mtu", 1500, "underlay MTU")
	fs.IntVar(&r.Repeat, "repeat", 0, "interleaved rounds: every cell runs once per round, in an order that changes from round to round (default 1)")
	out := fs.String("out", "", "results JSON `FILE` (default: cnperf-results/run-<time>.json); an existing file is replaced only if it is a cnperf results file")
	force := fs.Bool("force", false, "let --out replace an existing file that is not a cnperf results file, or a symlink")
	outputs := report.OutputFlags(fs, "run")
	fs.BoolVar(&r.NoBaseline, "no-baseline", false, "do not add the baseline rows")
	quiet := fs.Bool("quiet", false, "no progress lines and no status line")
	dryRun := fs.Bool("dry-run", false, "print what would be built and measured and about how long it takes, and exit")
	fs.StringVar(&r.LBs, "lb", "", "ClusterIP load balancers, comma-separated: iptables, nftables, ipvs, ebpf-socket, ebpf-tc, none (the pod IP directly)")
	fs.StringVar(&r.Services, "services", "", "with --lb: numbers of services to program, comma-separated scale steps (default 1)")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	fs.StringVar(&r.Pin, "pin", "", "pin the client and server agents to CPUs, e.g. 0,1 (steadier numbers on a busy machine)")
	r.ModeOptions = option.KeyValues(fs, "mode-opt", "network-mode option key=value, repeatable or comma-separated (e.g. controlplane=off, encrypt=aes-gcm)")
	opts, extra := plan.FlagsOfExperiments(fs), plan.FlagsOfWorkloads(fs)
	if _, err := c.Parse(); err != nil {
		return nil, err
	}
	if err := plan.CheckExplicit(option.Given(fs, nil)); err != nil {
		return nil, exitcode.With(err, exitcode.Usage)
	}
	r.Options, r.Extra, r.BackendFlags = option.Given(fs, opts), option.Given(fs, extra), option.Given(fs, beFlags)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r.Agent = []string{self, "agent"}
	p, err := plan.Build(r)
	if err != nil {
		return nil, exitcode.With(err, exitcode.Usage)
	}
	// before anything is built: a bad path found after the run loses nothing
	// measured, but costs the run's time
	if err := outputs.Check(); err != nil {
		return nil, exitcode.With(err, exitcode.Usage)
	}
	if err := checkRunOut(*out, *cpuLatency); err != nil {
		return nil, err
	}
	return &runSetup{plan: *p, out: *out, outputs: *outputs, cpuLatency: *cpuLatency, quiet: *quiet, dryRun: *dryRun, force: *force}, nil
}

func cmdRun(c *cli.Ctx) error {
	setup, err := parseRun(c)
	if err != nil {
		return err
	}
	if setup.dryRun {
		return runner.DryRun(os.Stdout, setup.plan)
	}
	run, path, err := execute(setup, 0)
	if run != nil {
		session.ListFailed(os.Stderr, run)
	}
	if err != nil {
		return err
	}
	return session.CellsStatus(run, path)
}

// errTimeLimit ends a run that reached its limit.
var errTimeLimit = session.ErrTimeLimit

// execute runs a checked setup, as `cnperf run` does (package session).
// With limit above 0 the run stops after that long (errTimeLimit, the run
// file written with what was measured). It returns the run and its file.
func execute(setup *runSetup, limit time.Duration) (*result.Run, string, error) {
	ctx, stop := interruptible()
	defer stop()
	return session.Execute(ctx, setup.plan, session.Options{Out: setup.out, Outputs: setup.outputs,
		CPULatency: setup.cpuLatency, Quiet: setup.quiet, Limit: limit, Version: version, Command: os.Args,
		Stdout: os.Stdout, Stderr: os.Stderr, Force: setup.force})
}

// checkRunOut refuses, as bad usage, a --out file that cannot be written
// and a --cpu-latency that cannot be held, before anything is built.
func checkRunOut(out, cpuLatency string) error {
	if out != "" {
		if _, err := session.ResultsPath(out); err != nil {
			return cli.Usage(err)
		}
	}
	return cli.Usage(pmqos.CheckSpec(cpuLatency))
}
