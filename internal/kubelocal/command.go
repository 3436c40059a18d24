package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/exitcode"
)

// Usage is `cnperf cluster`'s one-line usage.
const Usage = "use `cnperf cluster up [--nodes N] | down | status | kubectl ARGS... | selftest`"

// IO is where a cluster command reads and writes.
type IO struct {
	In          io.Reader
	Out, Err    io.Writer
	Interrupted func() (context.Context, context.CancelFunc)
}

// Command is `cnperf cluster`: bad input exits 2, kubectl's own status is
// passed on.
func Command(o IO) *cli.Command {
	cluster := func(c *cli.Ctx) (*Cluster, context.Context, context.CancelFunc, error) {
		if _, err := c.Parse(); err != nil {
			return nil, nil, nil, err
		}
		k, err := New(Config{Nodes: 1}) // what down, status and kubectl do not need
		if err != nil {
			return nil, nil, nil, err
		}
		ctx, stop := o.Interrupted()
		return k, ctx, stop, nil
	}
	return &cli.Command{Name: "cluster", Summary: "a real Kubernetes cluster on this machine, in lab namespaces (root)", Subs: []*cli.Command{
		{Name: "up", Summary: "start the cluster: etcd, the control plane, N nodes, the pod network", Run: func(c *cli.Ctx) error {
			cfg := Config{}
			fs := c.Flags()
			fs.IntVar(&cfg.Nodes, "nodes", 2, "nodes (1 to 99)")
			fs.StringVar(&cfg.ProxyMode, "proxy-mode", "iptables", "kube-proxy's mode: iptables, nftables or ipvs")
			fs.StringVar(&cfg.Iptables, "iptables", "legacy", "the iptables kubelet and kube-proxy run: legacy (x_tables) or nft")
			fs.StringVar(&cfg.CNI, "cni", "bridge", "the pod network: "+strings.Join(CNIs, ", ")+" (flannel-*: real flanneld, built by scripts/flannel-build.sh; cilium: real Cilium, built by scripts/cilium-build.sh)")
			fs.BoolVar(&cfg.KubeProxyReplacement, "kube-proxy-replacement", false, "with --cni cilium: no kube-proxy, Cilium serves the Services (socket LB and tc programs)")
			fs.Func("cni-opt", "an option of the pod network, KEY=VALUE, repeatable: for cilium routing=tunnel|native (default tunnel), socket-lb=true|false (default true)", func(s string) error {
				k, v, ok := strings.Cut(s, "=")
				if !ok || k == "" {
					return fmt.Errorf("--cni-opt %q: want KEY=VALUE, e.g. routing=native", s)
				}
				if cfg.CNIOpts == nil {
					cfg.CNIOpts = map[string]string{}
				}
				cfg.CNIOpts[k] = v
				return nil
			})
			fs.StringVar(&cfg.BinDir, "bin", DefaultBinDir(), "the Kubernetes binaries (scripts/kube-build.sh builds them)")
			fs.StringVar(&cfg.Src, "src", "", "cnperf's source tree, the pause and agent images are built from (default: the one holding the working folder)")
			fs.DurationVar(&cfg.Wait, "wait", 3*time.Minute, "how long each part may take to come up")
			if _, err := c.Parse(); err != nil {
				return err
			}
			k, err := New(cfg)
			if err != nil {
				return exitcode.With(err, exitcode.Usage)
			}
			ctx, stop := o.Interrupted()
			defer stop()
			return k.Up(ctx)
		}},
		{Name: "down", Summary: "stop the cluster and remove what it made", Run: func(c *cli.Ctx) error {
			k, _, stop, err := cluster(c)
			if err != nil {
				return err
			}
			defer stop()
			return k.Down()
		}},
		{Name: "status", Summary: "the cluster's nodes and pods, or that none is up", Run: func(c *cli.Ctx) error {
			k, ctx, stop, err := cluster(c)
			if err != nil {
				return err
			}
			defer stop()
			return kubectlExit(k.Status(ctx, o.Out, o.Err))
		}},
		{Name: "kubectl", Args: "ARGS...", Raw: true, Summary: "run kubectl against the cluster (its own help: cnperf cluster kubectl help)", Run: func(c *cli.Ctx) error {
			k, ctx, stop, err := cluster(c)
			if err != nil {
				return err
			}
			defer stop()
			args, _ := c.Parse()
			return kubectlExit(k.Kubectl(ctx, o.In, o.Out, o.Err, args...))
		}},
		{Name: "selftest", Summary: "check the parts that need no Kubernetes binary: etcd, containerd and runc on 2 nodes, pod to pod", Run: func(c *cli.Ctx) error {
			k, ctx, stop, err := cluster(c)
			if err != nil {
				return err
			}
			defer stop()
			return k.Selftest(ctx)
		}},
	}}
}

// kubectlExit passes kubectl's exit status on as cnperf's.
func kubectlExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitcode.With(fmt.Errorf("kubectl exited with status %d", ee.ExitCode()), exitcode.Code(ee.ExitCode()))
	}
	return err
}
