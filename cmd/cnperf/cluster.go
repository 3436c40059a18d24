package main

import (
	"os"

	"github.com/cnperf/cnperf/internal/agentimage"
	"github.com/cnperf/cnperf/internal/kubelocal"
)

// cmdCluster runs the local Kubernetes cluster (package kubelocal).
func cmdCluster(args []string) error {
	return kubelocal.Command(args, kubelocal.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		NewFlags: newFlags, ParseFlags: parseFlags, Interrupted: interruptible})
}

// cmdImage builds the agent image (package agentimage).
func cmdImage(args []string) error {
	return agentimage.Command(args, agentimage.Flags{New: newFlags, Parse: parseFlags, Interrupted: interruptible})
}
