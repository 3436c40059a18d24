package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/kubelocal"
)

const clusterUsage = "use `cnperf cluster up [--nodes N] | down | status | kubectl ARGS... | selftest`"

// cmdCluster runs the local Kubernetes cluster (package kubelocal).
func cmdCluster(args []string) error {
	if len(args) == 0 {
		return exitcode.With(errors.New(clusterUsage), exitcode.Usage)
	}
	cfg := kubelocal.Config{Nodes: 1} // what down, status and kubectl do not need
	switch args[0] {
	case "up":
		fs := newFlags("cluster up")
		fs.IntVar(&cfg.Nodes, "nodes", 2, "nodes (1 to 99)")
		fs.StringVar(&cfg.ProxyMode, "proxy-mode", "iptables", "kube-proxy's mode: iptables, nftables or ipvs")
		fs.StringVar(&cfg.Iptables, "iptables", "legacy", "the iptables kubelet and kube-proxy run: legacy (x_tables) or nft")
		fs.StringVar(&cfg.CNI, "cni", "bridge", "the pod network: "+strings.Join(kubelocal.CNIs, ", ")+" (flannel-*: real flanneld, built by scripts/flannel-build.sh)")
		fs.StringVar(&cfg.BinDir, "bin", kubelocal.DefaultBinDir(), "the Kubernetes binaries (scripts/kube-build.sh builds them)")
		fs.StringVar(&cfg.Src, "src", "", "cnperf's source tree, the pause and agent images are built from (default: the one holding the working folder)")
		fs.DurationVar(&cfg.Wait, "wait", 3*time.Minute, "how long each part may take to come up")
		if err := parseFlags(fs, args[1:]); err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
		c, err := kubelocal.New(cfg)
		if err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
		ctx, stop := interruptible()
		defer stop()
		return c.Up(ctx)
	case "selftest":
		if err := parseFlags(newFlags("cluster selftest"), args[1:]); err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
		c, err := kubelocal.New(cfg)
		if err != nil {
			return err
		}
		ctx, stop := interruptible()
		defer stop()
		return c.Selftest(ctx)
	case "down", "status":
		if err := parseFlags(newFlags("cluster "+args[0]), args[1:]); err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
		c, err := kubelocal.New(cfg)
		if err != nil {
			return err
		}
		if args[0] == "down" {
			return c.Down()
		}
		ctx, stop := interruptible()
		defer stop()
		return kubectlExit(c.Status(ctx, os.Stdout, os.Stderr))
	case "kubectl":
		c, err := kubelocal.New(cfg)
		if err != nil {
			return err
		}
		ctx, stop := interruptible()
		defer stop()
		return kubectlExit(c.Kubectl(ctx, os.Stdin, os.Stdout, os.Stderr, args[1:]...))
	}
	return exitcode.With(fmt.Errorf("%q: %s", args[0], clusterUsage), exitcode.Usage)
}

// kubectlExit passes kubectl's exit status on as cnperf's.
func kubectlExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitcode.With(fmt.Errorf("kubectl exited with status %d", ee.ExitCode()), exitcode.Code(ee.ExitCode()))
	}
	return err
}
