// Package enginebench is `cnperf bench engine`: cnperf's own workloads
// against the reference tools, head to head on the same paths (http_qps
// against wrk, tcp_rr against sockperf's ping-pong, tcp_stream against
// iperf3). It is a
// composition of two commands and adds no measuring or statistic of its
// own: each pair is one `cnperf run` (package session: the agents, the
// interleaved rounds whose order changes every round, the PM QoS CPU
// wake-up bound held for every tool, the results file) of a suite it
// writes, and its text is `cnperf report --ratio` (report.Ratios: paired
// per-round ratios, their interval and verdict). It replaced
// scripts/bench-engine.sh, which redid all of that in bash.
package enginebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// A Pair is cnperf's workload and the reference tool it is held against,
// with the message size and the options both use.
type Pair struct {
	Name, Ours, Reference string
	Size                  int
	Options               map[string]string
}

// Pairs are the head-to-head pairs, by name.
var Pairs = []Pair{
	// 350 B responses from one nginx worker, 50 connections, one client thread
	{"http", "http_qps", "wrk_http", 350, map[string]string{"server": "nginx", "connections": "50", "threads": "1"}},
	{"rr", "tcp_rr", "sockperf_tcp", 16, nil},              // 16 B ping-pong, one connection
	{"stream", "tcp_stream", "iperf3_tcp", 128 << 10, nil}, // 128 KiB writes (iperf3's -l), one connection
}

// Paths are where a pair runs: on loopback (client and server in one pod
// sharing its namespace: the engine alone) and across a lab (a pod on each
// of two hosts, host-gw: the engine with a real path).
var Paths = map[string]experiment.Case{
	"loopback": {Network: "container", Placement: ground.SamePod},
	"lab":      {Network: "host-gw", Placement: ground.CrossHost},
}

// Config is one benchmark.
type Config struct {
	Rounds   int
	Duration time.Duration
	Pairs    []string // Pairs' names
	Paths    []string // Paths' names, in this order
	Dir      string   // where the results files go, one per pair
	// CPULatency is the PM QoS CPU wake-up bound held for every tool (as
	// cnperf run's --cpu-latency: µs, off or auto).
	CPULatency string
	Agent      []string // the command line that starts an agent
	Version    string
}

// Validate checks a configuration before anything is built.
func (c Config) Validate() error {
	if c.Rounds < 2 {
		return fmt.Errorf("--rounds %d: a paired ratio needs at least 2 rounds", c.Rounds)
	}
	if c.Duration < time.Second {
		return fmt.Errorf("--duration %v: iperf3 and sockperf run whole seconds; use 1s or more", c.Duration)
	}
	for _, p := range c.Pairs {
		if _, ok := pairByName(p); !ok {
			return fmt.Errorf("unknown pair %q; use one of %s", p, strings.Join(pairNames(), ", "))
		}
	}
	for _, p := range c.Paths {
		if _, ok := Paths[p]; !ok {
			return fmt.Errorf("unknown path %q; use loopback, lab or both", p)
		}
	}
	if len(c.Pairs) == 0 || len(c.Paths) == 0 {
		return errors.New("name at least one pair and one path")
	}
	if runtime.NumCPU() < 2 {
		return errors.New("needs 2 CPUs: every client is pinned to CPU 0, every server to CPU 1")
	}
	return nil
}

func pairByName(name string) (Pair, bool) {
	i := slices.IndexFunc(Pairs, func(p Pair) bool { return p.Name == name })
	if i < 0 {
		return Pair{}, false
	}
	return Pairs[i], true
}

func pairNames() []string {
	var n []string
	for _, p := range Pairs {
		n = append(n, p.Name)
	}
	return n
}

// Suite is the suite one pair runs as: its two workloads on every path,
// each cell Duration long, Rounds interleaved rounds.
func (c Config) Suite(p Pair) suite.Suite {
	var cases []experiment.Case
	for _, name := range c.Paths {
		cases = append(cases, Paths[name])
	}
	return suite.Suite{
		Name:      "bench-engine-" + p.Name,
		Summary:   p.Ours + " against " + p.Reference + ", head to head",
		Cases:     cases,
		Workloads: []string{p.Ours, p.Reference},
		Params:    workload.Params{Duration: c.Duration, MessageSize: p.Size},
		Options:   p.Options,
		Rounds:    c.Rounds,
	}
}

// Main runs every pair as a `cnperf run` of its suite, client pinned to
// CPU 0 and server to CPU 1 for every tool, and prints each pair's ratios.
func Main(ctx context.Context, c Config, stdout, stderr io.Writer) error {
	for _, name := range c.Pairs {
		p, _ := pairByName(name)
		st := c.Suite(p)
		pl, err := plan.Build(plan.Request{SuiteDef: &st, NoBaseline: true, Pin: "0,1", Agent: c.Agent})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "== %s: %s against %s, %d rounds of %v cells on %s ==\n", p.Name, p.Ours, p.Reference, c.Rounds, c.Duration, strings.Join(c.Paths, ", "))
		run, path, err := session.Execute(ctx, *pl, session.Options{
			Out: filepath.Join(c.Dir, "engine-"+p.Name+".json"), CPULatency: c.CPULatency,
			Version: c.Version, Command: os.Args, Stdout: io.Discard, Stderr: stderr,
		})
		if err != nil {
			return err
		}
		if err := report.Ratios(stdout, run, p.Ours, p.Reference); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fmt.Fprintf(stdout, "results: %s\n\n", path)
	}
	return nil
}

// Command is `cnperf bench engine`; interrupted is the context a run
// stops with.
func Command(interrupted func() (context.Context, context.CancelFunc), version string) *cli.Command {
	return &cli.Command{Name: "engine", Summary: "cnperf's workloads against wrk, sockperf and iperf3, head to head on loopback and across a lab", Run: func(cc *cli.Ctx) error {
		fs := cc.Flags()
		c := Config{Version: version}
		fs.IntVar(&c.Rounds, "rounds", 3, "interleaved rounds (each ratio is paired by round)")
		fs.DurationVar(&c.Duration, "duration", 4*time.Second, "each tool's run in a round")
		pairs := fs.String("pairs", "http,rr,stream", "the pairs: http (http_qps against wrk, nginx 350 B, -c50 -t1), rr (tcp_rr against sockperf, 16 B), stream (tcp_stream against iperf3, 128 KiB writes)")
		paths := fs.String("paths", "loopback,lab", "the paths: loopback (one pod), lab (host-gw, across two hosts)")
		fs.StringVar(&c.Dir, "out", "cnperf-results", "the folder the results files go to (engine-PAIR.json)")
		fs.StringVar(&c.CPULatency, "cpu-latency", "0", "the PM QoS CPU wake-up bound held for every tool: µs, off or auto")
		if _, err := cc.Parse(); err != nil {
			return err
		}
		c.Pairs, c.Paths = plan.SplitList(*pairs), plan.SplitList(*paths)
		if err := c.Validate(); err != nil {
			return cli.Usage(err)
		}
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		c.Agent = []string{self, "agent"}
		ctx, stop := interrupted()
		defer stop()
		return Main(ctx, c, os.Stdout, os.Stderr)
	}}
}
