package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// Selftest checks the parts of the cluster that need no Kubernetes
// binary, on 2 nodes: etcd answers; each node's containerd, in its own
// mount namespace, has both images and runs the agent image through
// runc; the bridge and host-local plugins give a pod on each node its
// address, and a TCP connection from the n1 pod reaches the n2 pod with
// its own source address (host-gw, no NAT). Everything is removed
// afterwards, whatever happened.
func (c *Cluster) Selftest(ctx context.Context) (err error) {
	c.cfg.Nodes = 2
	c.partial = true
	if _, err := exec.LookPath("iperf3"); err != nil {
		return errors.New("missing iperf3; run scripts/install-deps.sh")
	}
	lk, err := c.lockUp()
	if err != nil {
		return err
	}
	defer lk.unlock()
	if c.Exists() {
		return errors.New("a cluster is up (or left over); `cnperf cluster down` first")
	}
	if c.check != nil {
		if err := c.check(c, ctx); err != nil {
			return err
		}
	}
	defer func() {
		if err != nil {
			err = c.keepLogs(err)
		}
		if terr := c.teardown(); terr != nil {
			err = errors.Join(err, terr)
		}
	}()
	if err := os.MkdirAll(filepath.Join(c.Dir(), "pki"), 0o755); err != nil {
		return err
	}
	for _, d := range []string{c.logDir(), filepath.Join(c.Dir(), "images"), filepath.Join(c.Dir(), "etcd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, s := range c.steps {
		if s.name == "control plane" || s.name == "ready" {
			continue
		}
		if err := s.run(c, ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		c.logf("selftest: %s: done", s.name)
	}
	for n := 1; n <= 2; n++ {
		name := nodeName(n)
		c.mu.Lock()
		mnt := c.procs["mnt-"+name].Cmd.Process.Pid
		c.mu.Unlock()
		out, err := c.in(ctx, name, mnt, "ctr", "-a", filepath.Join(c.nodeDir(n), "containerd.sock"), "-n", "k8s.io",
			"run", "--rm", "--cgroup", "/"+c.cgroup(name+"/selftest"), AgentImage, "selftest", "/cnperf", "version")
		if err != nil {
			return fmt.Errorf("node %s could not run a container: %w", name, err)
		}
		c.logf("selftest: node %s: containerd ran %s via runc: %s", name, AgentImage, strings.TrimSpace(string(out)))
		if err := c.checkNodeVar(ctx, n, mnt); err != nil {
			return err
		}
		if err := c.cniPod(ctx, n, "ADD"); err != nil {
			return err
		}
		defer func() { _ = c.cniPod(context.Background(), n, "DEL") }()
	}
	server := exec.CommandContext(ctx, "ip", "netns", "exec", c.NetNS("n2-t"), "iperf3", "-s", "-1", "-B", "10.244.2.2")
	var slog strings.Builder
	server.Stdout, server.Stderr = &slog, &slog
	if err := server.Start(); err != nil {
		return err
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	time.Sleep(time.Second)
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", c.NetNS("n1-t"), "iperf3", "-c", "10.244.2.2", "-n", "64K").CombinedOutput(); err != nil {
		return fmt.Errorf("no TCP from the n1 pod to the n2 pod: %v: %s", err, lastLine(string(out)))
	}
	_ = server.Wait()
	if !strings.Contains(slog.String(), "Accepted connection from 10.244.1.2") {
		return fmt.Errorf("the n2 pod saw another source: %s", slog.String())
	}
	c.logf("selftest: pod 10.244.1.2 on n1 -> pod 10.244.2.2 on n2 over the underlay, source kept")
	c.logf("selftest: passed")
	return nil
}

// cniPod runs the bridge plugin's ADD or DEL for a test pod on node n,
// whose namespace cnperf-ID-nN-t the ADD makes.
func (c *Cluster) cniPod(ctx context.Context, n int, cmd string) error {
	name := nodeName(n)
	pod := c.NetNS(name + "-t")
	if cmd == "ADD" {
		if _, err := c.lab.AddNS(ctx, name+"-t"); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "cnperf-kube", %s}`, c.cniBridge(n))
	p := exec.CommandContext(ctx, "nsenter", "--net="+iproute.RunDir+"/"+c.NetNS(name), filepath.Join(CNIBinDir, "bridge"))
	p.Env = append(os.Environ(), "CNI_COMMAND="+cmd, "CNI_CONTAINERID=selftest"+name, "CNI_NETNS="+iproute.RunDir+"/"+pod,
		"CNI_IFNAME=eth0", "CNI_PATH="+CNIBinDir)
	p.Stdin = strings.NewReader(conf)
	if out, err := p.CombinedOutput(); err != nil {
		return fmt.Errorf("the bridge plugin's %s on %s: %v: %s", cmd, name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// checkNodeVar checks that node n's /var/lib/kubelet and
// /var/log/containers are its own folders (kubelet's fixed paths), and
// that the host's /var/lib is read-only there.
func (c *Cluster) checkNodeVar(ctx context.Context, n, mnt int) error {
	name := nodeName(n)
	for _, p := range [][2]string{
		{"/var/lib/kubelet/device-plugins", filepath.Join(c.nodeDir(n), "kubelet", "device-plugins")},
		{"/var/log/containers", filepath.Join(c.nodeDir(n), "containerlogs")},
	} {
		probe := filepath.Join(p[0], "selftest-"+name)
		if _, err := c.in(ctx, name, mnt, "sh", "-c", "mkdir -p "+p[0]+" && touch "+probe); err != nil {
			return fmt.Errorf("node %s: writing %s: %w", name, probe, err)
		}
		if _, err := os.Stat(filepath.Join(p[1], "selftest-"+name)); err != nil {
			return fmt.Errorf("node %s: %s is not the node's own (%s): %w", name, p[0], p[1], err)
		}
	}
	for _, d := range []string{"/var/lib", "/var/log"} {
		view := filepath.Join(c.nodeDir(n), "host", d)
		out, err := c.in(ctx, name, mnt, "findmnt", "-no", "OPTIONS", view)
		if err != nil || !strings.HasPrefix(string(out), "ro,") {
			return fmt.Errorf("node %s: the host's %s is not read-only there (%s: %q, %v)", name, d, view, out, err)
		}
	}
	c.logf("selftest: node %s: /var/lib/kubelet and /var/log/containers are the node's own", name)
	return nil
}
