package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/tund"
)

// cmdTund is the user-space tunnel daemon flannel-udp and weave start on
// each lab host; it runs until SIGTERM.
func cmdTund(c *cli.Ctx) error {
	config := tund.Flags(c.Flags())
	if _, err := c.Parse(); err != nil {
		return err
	}
	cfg, err := config()
	if err != nil {
		return cli.Usage(err)
	}
	cfg.Log = os.Stdout
	ctx, stop := interruptible()
	defer stop()
	return tund.Run(ctx, cfg)
}
