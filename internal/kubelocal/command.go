package kubelocal

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/exitcode"
)

// Usage is `cnperf cluster`'s one-line usage.
const Usage = "use `cnperf cluster up [--nodes N] | down | status | kubectl ARGS... | selftest`"

// IO is where a cluster command reads and writes.
type IO struct {
	In          io.Reader
	Out, Err    io.Writer
	NewFlags    func(name string) *flag.FlagSet
	ParseFlags  func(fs *flag.FlagSet, args []string) error
	Interrupted func() (context.Context, context.CancelFunc)
}

// Command runs `cnperf cluster ARGS`: bad input exits 2, kubectl's own
// status is passed on.
func Command(args []string, o IO) error {
	if len(args) == 0 {
		return exitcode.With(errors.New(Usage), exitcode.Usage)
	}
	cfg := Config{Nodes: 1} // what down, status and kubectl do not need
	parse := func(fs *flag.FlagSet) error {
		return exitcode.With(o.ParseFlags(fs, args[1:]), exitcode.Usage)
	}
	switch args[0] {
	case "up":
		fs := o.NewFlags("cluster up")
		fs.IntVar(&cfg.Nodes, "nodes", 2, "nodes (1 to 99)")
		fs.StringVar(&cfg.ProxyMode, "proxy-mode", "iptables", "kube-proxy's mode: iptables, nftables or ipvs")
		fs.StringVar(&cfg.Iptables, "iptables", "legacy", "the iptables kubelet and kube-proxy run: legacy (x_tables) or nft")
		fs.StringVar(&cfg.CNI, "cni", "bridge", "the pod network: "+strings.Join(CNIs, ", ")+" (flannel-*: real flanneld, built by scripts/flannel-build.sh)")
		fs.StringVar(&cfg.BinDir, "bin", DefaultBinDir(), "the Kubernetes binaries (scripts/kube-build.sh builds them)")
		fs.StringVar(&cfg.Src, "src", "", "cnperf's source tree, the pause and agent images are built from (default: the one holding the working folder)")
		fs.DurationVar(&cfg.Wait, "wait", 3*time.Minute, "how long each part may take to come up")
		if err := parse(fs); err != nil {
			return err
		}
		c, err := New(cfg)
		if err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
		ctx, stop := o.Interrupted()
		defer stop()
		return c.Up(ctx)
	case "selftest", "down", "status":
		if err := parse(o.NewFlags("cluster " + args[0])); err != nil {
			return err
		}
		c, err := New(cfg)
		if err != nil {
			return err
		}
		ctx, stop := o.Interrupted()
		defer stop()
		switch args[0] {
		case "selftest":
			return c.Selftest(ctx)
		case "down":
			return c.Down()
		}
		return kubectlExit(c.Status(ctx, o.Out, o.Err))
	case "kubectl":
		c, err := New(cfg)
		if err != nil {
			return err
		}
		ctx, stop := o.Interrupted()
		defer stop()
		return kubectlExit(c.Kubectl(ctx, o.In, o.Out, o.Err, args[1:]...))
	}
	return exitcode.With(fmt.Errorf("%q: %s", args[0], Usage), exitcode.Usage)
}

// kubectlExit passes kubectl's exit status on as cnperf's.
func kubectlExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitcode.With(fmt.Errorf("kubectl exited with status %d", ee.ExitCode()), exitcode.Code(ee.ExitCode()))
	}
	return err
}
