package labbench

import (
	"context"
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
)

// Command is `cnperf bench lab`: it builds a lab of many pods, pings
// every one, tears it down, and says what each step took.
func Command(interrupted func() (context.Context, context.CancelFunc)) *cli.Command {
	return &cli.Command{Name: "lab", Summary: "build many pods, ping each, tear them down, timed", Run: func(c *cli.Ctx) error {
		fs := c.Flags()
		var cfg Config
		fs.StringVar(&cfg.Network, "network", "host-gw", "the network: bridge, vxlan, host-gw, or any other `cnperf networks` lists")
		fs.IntVar(&cfg.Hosts, "hosts", 10, "emulated hosts")
		fs.IntVar(&cfg.PodsPerHost, "pods-per-host", 100, "pods on each host")
		fs.IntVar(&cfg.Workers, "workers", 0, "how many hosts, pods or namespaces are built or deleted at once (default 4 per CPU)")
		fs.BoolVar(&cfg.Commands, "commands", false, "build by running each recorded ip/bridge/sysctl command instead of through netlink (to compare)")
		fs.StringVar(&cfg.Neighbours, "neighbours", "auto", "pods' neighbour entries: dynamic (ARP), static (permanent), or auto: static when the kernel's shared neighbour table has no room for the lab's")
		fs.DurationVar(&cfg.KernelWait, "kernel-wait", 30*time.Second, "after teardown, how long to watch for the kernel freeing the namespaces (0: do not)")
		out := fs.String("out", "", "write the result as JSON to this file")
		force := fs.Bool("force", false, cli.ForceUsage)
		if _, err := c.Parse(); err != nil {
			return err
		}
		if err := cfg.Validate(); err != nil {
			return cli.Usage(err)
		}
		if err := cli.CheckOutputs(nil, *force, cli.Output{Flag: "--out", Path: *out, Example: "bench.json", Kind: Kind}); err != nil {
			return cli.Usage(err)
		}
		ctx, stop := interrupted()
		defer stop()
		return Main(ctx, cfg, *out, os.Stdout, os.Stderr)
	}}
}
