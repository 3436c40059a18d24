package dockerlab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend/labbackend"
	"github.com/cnperf/cnperf/internal/dockerengine"
	"github.com/cnperf/cnperf/internal/lab"
)

// engineWait bounds an engine's start (this shared machine has taken 10 s).
const engineWait = 2 * time.Minute

// A cluster is the lab that holds a run's engines: its switch and host
// namespaces, and an engine per host started when a deployment first
// needs that host, joined in a swarm when one first needs the overlay.
// Every deployment of the backend shares it (as containers of several
// networks share one real cluster); the last one to go tears it down.
type cluster struct {
	b    *Backend
	run  string // the run id (the labels' cnperf.run)
	lab  *lab.Lab
	refs int

	mu      sync.Mutex
	engines map[int]*engine
	swarm   bool
	token   string
	phases  map[string]time.Duration
	made    []string    // hidden targets that did not exist and were made
	calls   []string    // the API calls that built it, for the record
	macRefs map[int]int // per host: the deployments using its engine's macvlan network
}

// engine is one host's Docker engine.
type engine struct {
	host  *lab.Host
	dir   string
	proc  *lab.Proc
	e     *dockerengine.Engine
	image string
}

// clusterID is the lab id of run's cluster: the lab backend numbers the
// labs of a run run, runs2, runs3...; runs0 is never one of them, so the
// two stand side by side and `cnperf clean --id run` finds both.
func clusterID(run string) string { return run + ClusterSuffix }

// newCluster builds the lab (switch and host namespaces) with hosts hosts.
func (b *Backend) newCluster(ctx context.Context, run string, hosts int) (*cluster, error) {
	cfg := b.Lab
	cfg.ID = clusterID(run)
	cfg.Name = Name
	cfg.ModeOptions = nil // docker-lab's options are the engines', not a mode's
	cfg.Hosts = max(2, hosts)
	l, err := lab.New(cfg)
	if err != nil {
		return nil, err
	}
	c := &cluster{b: b, run: run, lab: l, engines: map[int]*engine{}, phases: map[string]time.Duration{}, macRefs: map[int]int{}}
	if err := l.Create(ctx); err != nil {
		_ = c.teardown()
		return nil, err
	}
	for _, h := range l.Hosts {
		for _, kv := range labbackend.LabSysctls {
			if err := l.Sysctl(ctx, h.NetNS, kv[0], kv[1]); err != nil {
				_ = c.teardown()
				return nil, err
			}
		}
	}
	return c, nil
}

// record notes an API call that built the cluster.
func (c *cluster) record(host int, format string, args ...any) {
	c.calls = append(c.calls, fmt.Sprintf("docker -H unix://%s ", socketOf(c.engineDir(host)))+fmt.Sprintf(format, args...))
}

func (c *cluster) engineDir(host int) string {
	return filepath.Join(c.lab.Dir, "e"+strconv.Itoa(host))
}

// cgroupOf is an engine's own cgroup (relative to each hierarchy's root).
func (c *cluster) cgroupOf(host int) string {
	return filepath.Join(lab.RunCgroup(c.lab.ID), "e"+strconv.Itoa(host))
}

// containerCgroup is the parent of every engine's containers' cgroups:
// the run's cgroup itself, so that a container's CPU cgroup is as deep
// as under a stock engine (/docker/ID): every level the scheduler walks
// at each wake-up costs (docs/validation.md measures it).
func (c *cluster) containerCgroup() string {
	return "/" + lab.RunCgroup(c.lab.ID)
}

// makeCgroup creates rel in every hierarchy; a v1 cpuset gets its
// parent's CPUs and memory nodes, without which it takes no process.
func makeCgroup(rel string) error {
	for _, root := range lab.CgroupRoots() {
		parts := strings.Split(rel, "/")
		for i := range parts {
			d := filepath.Join(root, filepath.Join(parts[:i+1]...))
			if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
				return fmt.Errorf("cgroup %s: %w", d, err)
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				cur, err := os.ReadFile(filepath.Join(d, f))
				if err != nil || strings.TrimSpace(string(cur)) != "" {
					continue
				}
				v, err := os.ReadFile(filepath.Join(filepath.Dir(d), f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return fmt.Errorf("cgroup %s: %w", filepath.Join(d, f), err)
				}
			}
		}
	}
	return nil
}

// hides makes the engine's own folders for the hidden targets; a target
// the machine does not have is made (an empty folder, removed again at
// teardown) so that there is something to mount over.
func (c *cluster) hides(dir string) ([]hide, error) {
	var out []hide
	for _, t := range hiddenTargets {
		real := t
		if p, err := filepath.EvalSymlinks(filepath.Dir(t)); err == nil {
			real = filepath.Join(p, filepath.Base(t)) // /var/run/docker is /run/docker
		}
		if _, err := os.Stat(real); os.IsNotExist(err) {
			if err := os.Mkdir(real, 0o755); err != nil {
				return nil, fmt.Errorf("making %s to hide it from the engines: %w", real, err)
			}
			c.made = append(c.made, real)
		}
		src := filepath.Join(dir, "hide", strings.ReplaceAll(strings.Trim(t, "/"), "/", "-"))
		if err := os.MkdirAll(src, 0o700); err != nil {
			return nil, err
		}
		out = append(out, hide{Target: real, Source: src})
	}
	return out, nil
}

// engine returns host's engine, starting it (and joining it to the swarm,
// if there is one) the first time.
func (c *cluster) engine(ctx context.Context, host int) (*engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.engineLocked(ctx, host)
}

func (c *cluster) engineLocked(ctx context.Context, host int) (*engine, error) {
	if en := c.engines[host]; en != nil {
		return en, nil
	}
	if host < 1 || host > len(c.lab.Hosts) {
		return nil, fmt.Errorf("docker-lab: no host %d (the cluster has %d)", host, len(c.lab.Hosts))
	}
	t0 := time.Now()
	h := c.lab.Hosts[host-1]
	dir := c.engineDir(host)
	for _, sub := range []string{"data", "exec"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	// its own, empty, config file: not the machine's /etc/docker/daemon.json
	if err := os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}\n"), 0o644); err != nil {
		return nil, err
	}
	hs, err := c.hides(dir)
	if err != nil {
		return nil, err
	}
	if err := makeCgroup(c.cgroupOf(host)); err != nil {
		return nil, err
	}
	spec := engineSpec{
		Hostname: h.NetNS,
		Dir:      dir,
		Cgroups:  machineCgroupMounts(),
		Cgroup:   c.cgroupOf(host),
		Hides:    hs,
		Dockerd: dockerdArgs{
			Dir: dir, CgroupParent: c.containerCgroup(),
			Bridge: fmt.Sprintf("172.17.%d.1/24", host), MTU: c.lab.Cfg.MTU,
			UserlandProxy: c.b.userlandProxy(),
		}.argv(),
	}
	proc, err := c.lab.Start(h.NetNS, "dockerd-"+h.Name, spec.argv()...)
	if err != nil {
		return nil, err
	}
	e, err := dockerengine.New("unix://" + socketOf(dir))
	if err != nil {
		return nil, err
	}
	e.Unreachable = c.engineGone(h, proc)
	en := &engine{host: h, dir: dir, proc: proc, e: e}
	deadline := time.Now().Add(engineWait)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := e.Negotiate(pctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-proc.Done():
			return nil, agent.Cause(agent.ErrExited, fmt.Sprintf("the Docker engine cnperf started on lab host %s has exited as it started (its log ends: %s)", h.Name, cmp.Or(oneLine(c.lab.LogTail("dockerd-"+h.Name, 3)), "nothing")))
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the Docker engine of %s did not answer within %v: %s", h.Name, engineWait, oneLine(c.lab.LogTail("dockerd-"+h.Name, 3)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.phases["engine_start"] = max(c.phases["engine_start"], time.Since(t0))
	t1 := time.Now()
	if en.image, err = dockerengine.EnsureImage(ctx, e, c.b.binary()); err != nil {
		return nil, fmt.Errorf("agent image on the engine of %s: %w", h.Name, err)
	}
	c.record(host, "import %s (the agent image, from the cnperf binary; nothing pulled)", en.image)
	c.phases["image_import"] = max(c.phases["image_import"], time.Since(t1))
	c.engines[host] = en
	if c.swarm {
		if err := c.join(ctx, en); err != nil {
			return nil, err
		}
	}
	return en, nil
}

// addrPool is the swarm's default address pool: the first of these /16s
// that overlaps neither the underlay nor the pod network.
func (c *cluster) addrPool() string {
	for _, p := range []string{"10.210.0.0/16", "10.211.0.0/16", "10.212.0.0/16", "172.30.0.0/16"} {
		pp := netip.MustParsePrefix(p)
		if !pp.Overlaps(c.lab.Cfg.Underlay) && !pp.Overlaps(c.lab.Cfg.PodNet) && (!c.lab.Cfg.Routed || !pp.Overlaps(netip.PrefixFrom(c.lab.Cfg.Underlay.Addr(), 16).Masked())) {
			return p
		}
	}
	return "10.210.0.0/16"
}

// ensureSwarm makes host 1's engine a swarm manager, over the underlay,
// and joins every other engine started (and every one started later).
func (c *cluster) ensureSwarm(ctx context.Context) (*engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mgr, err := c.engineLocked(ctx, 1)
	if err != nil || c.swarm {
		return mgr, err
	}
	t0 := time.Now()
	ip := mgr.host.IP.String()
	req := dockerengine.SwarmInitRequest{ListenAddr: ip + ":2377", AdvertiseAddr: ip, DataPathAddr: ip,
		DefaultAddrPool: []string{c.addrPool()}, SubnetSize: 24}
	c.record(1, "swarm init --listen-addr %s --advertise-addr %s --data-path-addr %s --default-addr-pool %s --default-addr-pool-mask-length %d",
		req.ListenAddr, ip, ip, req.DefaultAddrPool[0], req.SubnetSize)
	if _, err := mgr.e.SwarmInit(ctx, req); err != nil {
		return nil, fmt.Errorf("swarm init on %s: %w", mgr.host.Name, err)
	}
	if c.token, err = mgr.e.SwarmWorkerToken(ctx); err != nil {
		return nil, err
	}
	c.swarm = true
	c.phases["swarm_init"] = time.Since(t0)
	for i := 2; i <= len(c.lab.Hosts); i++ {
		if en := c.engines[i]; en != nil {
			if err := c.join(ctx, en); err != nil {
				return nil, err
			}
		}
	}
	return mgr, nil
}

// join makes en a worker of the swarm.
func (c *cluster) join(ctx context.Context, en *engine) error {
	if en.host.Index == 1 {
		return nil
	}
	t0 := time.Now()
	ip := en.host.IP.String()
	req := dockerengine.SwarmJoinRequest{ListenAddr: ip + ":2377", AdvertiseAddr: ip, DataPathAddr: ip,
		RemoteAddrs: []string{c.lab.Hosts[0].IP.String() + ":2377"}, JoinToken: c.token}
	c.record(en.host.Index, "swarm join --listen-addr %s --advertise-addr %s --data-path-addr %s --token (the worker token) %s", req.ListenAddr, ip, ip, req.RemoteAddrs[0])
	if err := en.e.SwarmJoin(ctx, req); err != nil {
		return fmt.Errorf("swarm join of %s: %w", en.host.Name, err)
	}
	c.phases["swarm_join"] = max(c.phases["swarm_join"], time.Since(t0))
	return nil
}

// teardown kills every engine and everything it started (the run's
// cgroups), then removes the lab's namespaces and state folder, and the
// hidden targets it made.
func (c *cluster) teardown() error {
	var errs []error
	if err := lab.RemoveRunCgroup(c.lab.ID); err != nil {
		errs = append(errs, err)
	}
	if err := c.lab.Teardown(); err != nil {
		errs = append(errs, err)
	}
	for i := len(c.made) - 1; i >= 0; i-- {
		_ = os.Remove(c.made[i]) // only when empty: what the engines left there was in their own mount
	}
	return errors.Join(errs...)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// engineGone is the error of a lab host's engine that does not answer: one
// cnperf started, so the user's `systemctl start docker` is not the fix.
func (c *cluster) engineGone(h *lab.Host, proc *lab.Proc) func(error) error {
	return func(err error) error {
		select {
		case <-proc.Done():
			return agent.Cause(agent.ErrExited, fmt.Sprintf("the Docker engine cnperf started on lab host %s has exited (its log ends: %s); the run cannot go on with it",
				h.Name, cmp.Or(oneLine(c.lab.LogTail("dockerd-"+h.Name, 2)), "nothing")))
		default:
			return fmt.Errorf("the Docker engine cnperf started on lab host %s does not answer (%v)", h.Name, err)
		}
	}
}
