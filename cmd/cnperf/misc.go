package main

import (
	"context"
	"errors"
	"os"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/catalog"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/tmpdir"
)

func cmdNetworks(c *cli.Ctx) error {
	fs := c.Flags()
	verbose := fs.Bool("v", false, "also list each network's options (--mode-opt key=value)")
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/networks/v1): every network, whether this machine can build it, its options")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *asJSON {
		return catalog.NetworksJSON(os.Stdout)
	}
	return catalog.Networks(os.Stdout, *verbose)
}

func cmdWorkloads(c *cli.Ctx) error {
	fs := c.Flags()
	verbose := fs.Bool("v", false, "also each workload's options (its flags) and the figures it reports")
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/workloads/v1): every workload and measure, its figures (which way is better), its options")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *asJSON {
		return catalog.WorkloadsJSON(os.Stdout)
	}
	return catalog.Workloads(os.Stdout, *verbose)
}

func cmdReport(c *cli.Ctx) error {
	fs := c.Flags()
	hgrm := fs.String("hgrm", "", "also write every result's latency distribution as HdrHistogram .hgrm text into this folder (`DIR`)")
	ratio := fs.String("ratio", "", "instead of the table, compare two workloads run side by side: `A:B` (e.g. tcp_stream:iperf3_tcp)")
	out := report.OutputFlags(fs, "report")
	force := fs.Bool("force", false, cli.ForceUsage)
	pool := fs.Bool("pool", false, "pool the rounds of the same cells across the files into one run (each file's rounds renumbered after the previous file's; cells paired by round within each file only) and recompute every verdict")
	fs.BoolVar(&report.Uncorrected, "uncorrected", false, "mark each ratio by its own test at 5 % alone, not corrected for the family of ratios the table prints (Holm's procedure, the default)")
	paths, err := c.Parse()
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return cli.Usagef("name a results file: cnperf report cnperf-results/run-....json")
	}
	return report.Show(os.Stdout, paths, report.ShowOptions{Hgrm: *hgrm, Ratio: *ratio, Outputs: *out, Pool: *pool, Force: *force})
}

func cmdClean(c *cli.Ctx) error {
	fs := c.Flags()
	force := fs.Bool("force", false, "also remove the labs of runs that are still going")
	id := fs.String("id", "", "only this run's leftovers (the id in its namespace names, cnperf-ID-...)")
	be := fs.String("backend", backend.Names()[0], plan.CleanUsage())
	flags := plan.FlagsOfBackends(fs, true)
	if _, err := c.Parse(); err != nil {
		return err
	}
	info, values, err := plan.Cleaner(*be, option.Given(fs, flags))
	if err != nil {
		return cli.Usage(err)
	}
	err = cleanup.Run(context.Background(), info.Cleaner, cleanup.Request{ID: *id, Force: *force, Flags: values, Out: os.Stdout})
	if *id != "" {
		return err
	}
	// the temporary folders of cnperf processes that are gone (a killed
	// run's nginx state...): they name no run id, so only a clean of all
	return errors.Join(err, tmpdir.Clean("", os.Stdout))
}

func cmdAgent(c *cli.Ctx) error {
	fs := c.Flags()
	listen := fs.String("listen", "", "control address: unix:/path.sock or tcp:host:port")
	parent := fs.Int("parent", 0, "exit when this process is gone")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *listen == "" {
		return cli.Usagef("--listen is required; give unix:/path.sock or tcp:host:port (cnperf starts its agents itself)")
	}
	ctx, stop := interruptible()
	defer stop()
	return agent.Serve(ctx, *listen, *parent)
}

func cmdSuites(c *cli.Ctx) error {
	fs := c.Flags()
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/suites/v1): every suite, its workloads, networks, rounds and cells")
	show := fs.String("show", "", "print suite `NAME` as a scenario file (YAML, its quick: block included) to copy: cnperf run -f FILE runs it as --suite NAME does")
	if _, err := c.Parse(); err != nil {
		return err
	}
	if *show != "" {
		return catalog.ShowSuite(os.Stdout, *show)
	}
	if *asJSON {
		return catalog.SuitesJSON(os.Stdout)
	}
	return catalog.Suites(os.Stdout)
}
