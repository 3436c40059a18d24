package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/tund"
)

// cmdTund is the user-space tunnel daemon flannel-udp and weave start on
// each lab host; it runs until SIGTERM.
func cmdTund(args []string) error {
	ctx, stop := interruptible()
	defer stop()
	return tund.Main(ctx, args, os.Stdout)
}
