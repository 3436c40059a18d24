package main

import (
	"cmp"
	"flag"
	"fmt"
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
	"github.com/cnperf/cnperf/internal/scenario"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/suite"
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
	scenario   *result.ScenarioRef
}

// runFlags are `cnperf run`'s flags, registered on fs, and where their
// values land.
type runFlags struct {
	fs                         *flag.FlagSet
	r                          plan.Request
	out, cpuLatency, file      *string
	outputs                    *report.Outputs
	quiet, dryRun, force, dump *bool
	opts, extra, beFlags       map[string]*string
	inputs                     []string // the files the run reads (-f's), which no output may replace
}

// newRunFlags registers them on fs; nil: a flag set of its own (a
// scenario's, a test's).
func newRunFlags(fs *flag.FlagSet) *runFlags {
	if fs == nil {
		fs = cli.NewFlagSet("cnperf run")
	}
	f := &runFlags{fs: fs}
	r := &f.r
	fs.StringVar(&r.Backend, "backend", backend.Names()[0], backend.Usage())
	f.beFlags = plan.FlagsOfBackends(fs, false)
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
	f.out = fs.String("out", "", "results JSON `FILE` (default: cnperf-results/run-<time>.json); an existing file is replaced only if it is a cnperf results file")
	f.force = fs.Bool("force", false, "let --out, --html, --csv, --openmetrics and --ndjson replace existing files that are not of their kind (or a symlink); never an input")
	f.outputs = report.OutputFlags(fs, "run")
	fs.BoolVar(&r.NoBaseline, "no-baseline", false, "do not add the baseline rows")
	f.quiet = fs.Bool("quiet", false, "no progress lines and no status line")
	f.dryRun = fs.Bool("dry-run", false, "print what would be built and measured and about how long it takes, and exit")
	fs.StringVar(&r.LBs, "lb", "", "ClusterIP load balancers, comma-separated: iptables, nftables, ipvs, ebpf-socket, ebpf-tc, none (the pod IP directly)")
	fs.StringVar(&r.Services, "services", "", "with --lb: numbers of services to program, comma-separated scale steps (default 1)")
	f.cpuLatency = fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	fs.StringVar(&r.Pin, "pin", "", "pin the client and server agents to CPUs, e.g. 0,1 (steadier numbers on a busy machine)")
	r.ModeOptions = option.KeyValues(fs, "mode-opt", "network-mode option key=value, repeatable or comma-separated (e.g. controlplane=off, encrypt=aes-gcm)")
	f.file = fs.String("file", "", "run the scenarios of this YAML file in order, each writing its own results (docs/usage.md, Scenario files); flags given with it replace every scenario's values")
	fs.StringVar(f.file, "f", "", "short for --file")
	f.dump = fs.Bool("dump-scenario", false, "write the scenario these flags mean to stdout (YAML for --file), and exit")
	f.opts, f.extra = plan.FlagsOfExperiments(fs), plan.FlagsOfWorkloads(fs)
	return f
}

// parseRun turns `cnperf run`'s arguments into a checked plan. It builds
// and writes nothing.
func parseRun(c *cli.Ctx) (*runSetup, error) {
	f := newRunFlags(c.Flags())
	if _, err := c.Parse(); err != nil {
		return nil, err
	}
	return f.setup()
}

// setup checks the parsed flags and makes the plan.
func (f *runFlags) setup() (*runSetup, error) {
	r := f.r
	if err := plan.CheckExplicit(option.Given(f.fs, nil)); err != nil {
		return nil, exitcode.With(err, exitcode.Usage)
	}
	r.Options, r.Extra, r.BackendFlags = option.Given(f.fs, f.opts), option.Given(f.fs, f.extra), option.Given(f.fs, f.beFlags)
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
	outs := append([]cli.Output{{Flag: "--out", Path: *f.out, Example: "results.json", Kind: report.ResultsKind}}, f.outputs.List()...)
	if err := cmp.Or(cli.CheckOutputs(f.inputs, *f.force, outs...), session.CheckOut(*f.out, *f.force), pmqos.CheckSpec(*f.cpuLatency)); err != nil {
		return nil, exitcode.With(err, exitcode.Usage)
	}
	return &runSetup{plan: *p, out: *f.out, outputs: *f.outputs, cpuLatency: *f.cpuLatency, quiet: *f.quiet, dryRun: *f.dryRun, force: *f.force}, nil
}

func cmdRun(c *cli.Ctx) error {
	f := newRunFlags(c.Flags())
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *f.file != "" {
		return runScenarios(f, c.Args())
	}
	setup, err := f.setup()
	switch {
	case err != nil:
		return err
	case *f.dump:
		return scenario.Dump(os.Stdout, "run", f.fs)
	case setup.dryRun:
		return runner.DryRun(os.Stdout, setup.plan)
	}
	return setup.run()
}

// run executes the setup and says how it went: the failed cells listed,
// exit 4 when some failed.
func (setup *runSetup) run() error {
	run, path, err := execute(setup, 0)
	if run != nil {
		session.ListFailed(os.Stderr, run)
	}
	if err != nil {
		return err
	}
	return session.CellsStatus(run, path)
}

// runScenarios runs the scenarios of --file in order, each writing its
// own results, after planning them all; a flag given with --file replaces
// every scenario's value. The exit status is the worst of them.
func runScenarios(cmdline *runFlags, args []string) error {
	if *cmdline.dump {
		return exitcode.With(fmt.Errorf("--dump-scenario writes the scenario of flags, and --file %s is one already; drop one of them", *cmdline.file), exitcode.Usage)
	}
	scs, setups, err := prepareScenarios(*cmdline.file, cmdline.fs, args)
	if err != nil {
		return exitcode.With(err, exitcode.Usage)
	}
	ctx, stop := interruptible()
	defer stop()
	return scenario.RunAll(ctx, scs, func(i int) error {
		if *cmdline.dryRun {
			fmt.Printf("# %s\n", scs[i])
			return runner.DryRun(os.Stdout, setups[i].plan)
		}
		setups[i].scenario = &result.ScenarioRef{Name: scs[i].Name, File: scs[i].File, Line: scs[i].Line}
		if !setups[i].quiet {
			fmt.Fprintf(os.Stderr, "cnperf run: %s, %d of %d\n", scs[i], i+1, len(scs))
		}
		return setups[i].run()
	})
}

// prepareScenarios reads and plans every scenario of file; args, the
// command line's, replace their values where cmdline has them.
func prepareScenarios(file string, cmdline *flag.FlagSet, args []string) ([]scenario.Scenario, []*runSetup, error) {
	return scenario.Prepare(file, cmdline, args, func() (*flag.FlagSet, func(*suite.Suite) (*runSetup, error)) {
		f := newRunFlags(nil)
		f.inputs = []string{file} // no output may overwrite the scenario file
		return f.fs, func(def *suite.Suite) (*runSetup, error) { f.r.SuiteDef = def; return f.setup() }
	}, parseRunFlags)
}

// parseRunFlags parses args as run's flags onto fs.
func parseRunFlags(fs *flag.FlagSet, args []string) error {
	pos, err := cli.Parse(fs, args, "cnperf run")
	if err == nil && len(pos) > 0 {
		err = cli.Usagef("unexpected argument %q: cnperf run takes flags only (they start with --); see `cnperf run --help`", pos[0])
	}
	return err
}

// errTimeLimit ends a run that reached its limit.
var errTimeLimit = plan.ErrTimeLimit

// execute runs a checked setup, as `cnperf run` does (package session).
// With limit above 0 the run stops after that long (errTimeLimit, the run
// file written with what was measured). It returns the run and its file.
func execute(setup *runSetup, limit time.Duration) (*result.Run, string, error) {
	ctx, stop := interruptible()
	defer stop()
	return session.Execute(ctx, setup.plan, session.Options{Out: setup.out, Outputs: setup.outputs,
		CPULatency: setup.cpuLatency, Quiet: setup.quiet, Limit: limit, Version: version, Command: os.Args,
		Stdout: os.Stdout, Stderr: os.Stderr, Force: setup.force, Scenario: setup.scenario})
}
