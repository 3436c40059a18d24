package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/iproute"
)

// Down removes the cluster: every process in its cgroups gets SIGTERM,
// then SIGKILL after cfg.Grace; Down returns only once all of them have
// exited (or fails naming those left, keeping the rest for another try),
// then removes the cgroups, the namespaces and the state folder. An up
// still running is stopped first. Harmless when no cluster is up.
func (c *Cluster) Down() error {
	lk, err := c.lockDown()
	if err != nil {
		return err
	}
	defer lk.unlock()
	if err := c.teardown(); err != nil {
		return err
	}
	c.logf("down: done")
	return nil
}

// teardown is Down without the lock (a failed Up holds it already).
func (c *Cluster) teardown() error {
	if err := lab.StopRunCgroup(c.cfg.ID, c.cfg.Grace, c.cfg.StopLimit); err != nil {
		return fmt.Errorf("%w; run `cnperf cluster down` again", err)
	}
	// before the state folder goes: it says what up made for Cilium
	if err := c.releaseCilium(); err != nil {
		return err
	}
	// the namespaces and the state folder, as `cnperf clean` removes a
	// dead run's (/run/containerd stays: other containerds' shims use it)
	if _, err := lab.CleanRun(c.cfg.ID, true); err != nil {
		return err
	}
	return nil
}

// errNoCluster is Status's and Kubectl's answer when nothing is up.
var errNoCluster = errors.New("no cluster up; `cnperf cluster up` starts one")

// binDir is where the running cluster's binaries are (recorded by up).
func (c *Cluster) binDir() (string, error) {
	if _, err := os.Stat(iproute.RunDir + "/" + c.CPNetNS()); err != nil {
		return "", errNoCluster
	}
	b, err := os.ReadFile(filepath.Join(c.Dir(), "bin"))
	if err != nil {
		return "", errNoCluster
	}
	return strings.TrimSpace(string(b)), nil
}

// Kubectl runs the cluster's kubectl as admin inside the control plane,
// with the caller's standard streams; its exit status comes back as an
// *exec.ExitError.
func (c *Cluster) Kubectl(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args ...string) error {
	bin, err := c.binDir()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + iproute.RunDir + "/" + c.CPNetNS(),
		filepath.Join(bin, "kubectl"), "--kubeconfig=" + c.AdminKubeconfig()}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	return cmd.Run()
}

// Status prints the nodes and every pod.
func (c *Cluster) Status(ctx context.Context, stdout, stderr io.Writer) error {
	if err := c.Kubectl(ctx, nil, stdout, stderr, "get", "nodes", "-o", "wide"); err != nil {
		return err
	}
	if err := c.Kubectl(ctx, nil, stdout, stderr, "get", "pods", "-A", "-o", "wide"); err != nil {
		return err
	}
	if c.runsCilium() {
		fmt.Fprint(stdout, c.ciliumStatus(ctx))
	}
	return nil
}
