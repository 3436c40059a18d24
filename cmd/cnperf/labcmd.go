package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/labhold"
	"github.com/cnperf/cnperf/internal/plan"
)

// cmdLab builds one network and keeps it up, so that any tool (iperf3,
// sockperf, tcpdump, ping) can be run on the very path cnperf measures.
func cmdLab(c *cli.Ctx) error {
	fs := c.Flags()
	network := fs.String("network", "vxlan", "the network to build")
	placement := fs.String("placement", "", "comma-separated placements (default: every one the network allows)")
	mtu := fs.Int("mtu", 1500, "underlay MTU")
	hold := fs.Duration("for", 0, "tear down after this long (default: on Ctrl-C)")
	if _, err := c.Parse(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	return labhold.Hold(ctx, labhold.Options{Network: *network, Placements: plan.SplitList(*placement), MTU: *mtu, For: *hold,
		Agent: []string{self, "agent"}, Out: os.Stdout, Log: os.Stderr})
}
