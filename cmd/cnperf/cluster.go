package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/kubelocal"
)

// cmdCluster runs the local Kubernetes cluster (package kubelocal).
func cmdCluster(args []string) error {
	return kubelocal.Command(args, kubelocal.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		NewFlags: newFlags, ParseFlags: parseFlags, Interrupted: interruptible})
}
