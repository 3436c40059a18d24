package kubelocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// upDone is the file Up writes once every node is Ready.
func (c *Cluster) upDone() string { return filepath.Join(c.Dir(), "up-done") }

// unfinished says why the cluster's up has not finished, or "" when it
// has: an up still running (it holds the lock), or one that ended without
// finishing (killed: nothing removed what it made).
func (c *Cluster) unfinished() string {
	if _, err := os.Stat(c.upDone()); err == nil {
		return ""
	}
	if h, busy := lockHolder(c.cfg.Lock); busy {
		if h.role == "down" {
			return fmt.Sprintf("a `cnperf cluster down` (pid %d) is removing it", h.pid)
		}
		return fmt.Sprintf("a `cnperf cluster up` (pid %d) is still bringing it up", h.pid)
	}
	return "the `cnperf cluster up` that made it ended before the cluster was Ready (killed?); `cnperf cluster down` removes it"
}

// binDir is where the running cluster's binaries are (recorded by up).
func (c *Cluster) binDir() (string, error) {
	_, nsErr := os.Stat(iproute.RunDir + "/" + c.CPNetNS())
	b, err := os.ReadFile(filepath.Join(c.Dir(), "bin"))
	if nsErr != nil || err != nil {
		if c.Exists() {
			// up said "already up": so must status, naming what is there
			return "", fmt.Errorf("a cluster is left over, without its control plane: %s", c.unfinished())
		}
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

// Status prints the nodes and every pod; it fails, after printing them,
// when the cluster is not whole: its up did not finish, or fewer nodes
// are Ready than up was asked for.
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
	want, _ := os.ReadFile(filepath.Join(c.Dir(), "nodes"))
	var ready strings.Builder
	if err := c.Kubectl(ctx, nil, &ready, io.Discard, "get", "nodes", "-o",
		`jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{end}`); err != nil {
		return err
	}
	n, asked := 0, strings.TrimSpace(string(want))
	for _, s := range strings.Fields(ready.String()) {
		if s == "True" {
			n++
		}
	}
	if why := c.unfinished(); why != "" {
		return fmt.Errorf("the cluster is not whole, %d of %s nodes Ready: %s", n, asked, why)
	}
	if asked != "" && strconv.Itoa(n) != asked {
		return fmt.Errorf("%d of %s nodes Ready", n, asked)
	}
	return nil
}
