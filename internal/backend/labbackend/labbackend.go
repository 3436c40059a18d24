// Package labbackend is cnperf's default backend: the local multi-host lab
// of network namespaces (package lab), with a network mode (package
// netmode) wiring each deployment and ClusterIP load balancers (package
// svc) programming services in it. Each deployment gets its own lab and a
// fresh instance of its mode and load balancers, so several deployments
// can stand side by side (interleaved rounds) and share no state.
package labbackend

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hostprobe"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/tuning"
)

// Name is the backend's name.
const Name = "lab"

// NamespaceSysctls are read from a lab host for the environment record.
var NamespaceSysctls = []string{
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
	"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout",
	"net.core.somaxconn", "net.bridge.bridge-nf-call-iptables",
}

// Backend deploys into local labs.
type Backend struct {
	Lab   lab.Config // the base config: MTU, underlay, mode options, run id
	Agent []string   // argv that starts an agent; "--listen ADDR --parent PID" is appended
	Log   func(format string, args ...any)

	mu   sync.Mutex
	seq  int
	runs string // the run id
}

// New makes a lab backend.
func New(cfg lab.Config, agentArgv []string, logf func(string, ...any)) *Backend {
	return &Backend{Lab: cfg, Agent: agentArgv, Log: logf}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

// Check reports what this machine lacks to build network.
func (b *Backend) Check(network string) error {
	m, err := netmode.Get(network)
	if err != nil {
		return err
	}
	opts := map[string]string{}
	for k, v := range b.Lab.ModeOptions {
		if _, ok := option.Find(netmode.OptionsOf(m), k); ok {
			opts[k] = v
		}
	}
	return netmode.CheckOpts(m, opts)
}

func (b *Backend) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// nextID is the lab id of the next deployment: the run id for the first,
// then the run id with "s2", "s3"... so that labs standing side by side
// never share a namespace or a state folder, and each can be cleaned alone.
func (b *Backend) nextID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == "" {
		b.runs = b.Lab.ID
		if b.runs == "" {
			b.runs = lab.NewID()
		}
	}
	b.seq++
	if b.seq == 1 {
		return b.runs
	}
	return b.runs + "s" + strconv.Itoa(b.seq)
}

// RunID is the id every lab of this backend starts with.
func (b *Backend) RunID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == "" {
		b.runs = b.Lab.ID
		if b.runs == "" {
			b.runs = lab.NewID()
		}
	}
	return b.runs
}

// Deployment is a lab with a network built and agents in its pods.
type Deployment struct {
	Lab   *lab.Lab
	Mode  netmode.Mode
	Ready time.Duration
	b     *Backend
	pods  map[string]*podState
	order []string
	// Tuned is what the topology's tuning profile did, nil when untuned.
	Tuned *result.Tuning
}

type podState struct {
	backend.Pod
	lp  *lab.Pod
	key string // agent log name
}

// Deploy builds the lab, lets the mode wire it, adds the pods and starts
// an agent in each.
func (b *Backend) Deploy(ctx context.Context, topo backend.Topology) (_ backend.Deployment, err error) {
	d, err := b.DeployLab(ctx, topo)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// DeployLab is Deploy returning the concrete deployment (`cnperf lab`).
func (b *Backend) DeployLab(ctx context.Context, topo backend.Topology) (d *Deployment, err error) {
	m, err := netmode.Get(topo.Network)
	if err != nil {
		return nil, err
	}
	cfg := b.Lab
	cfg.Name = m.Name()
	// each network gets the options it declares (the rest are another
	// selected network's; the runner checked that someone takes each)
	cfg.ModeOptions = map[string]string{}
	for k, v := range b.Lab.ModeOptions {
		if _, ok := option.Find(netmode.OptionsOf(m), k); ok {
			cfg.ModeOptions[k] = v
		}
	}
	cfg.ID = b.nextID()
	netmode.ShapeLab(m, &cfg)
	if cfg.Hosts < topo.Hosts {
		cfg.Hosts = topo.Hosts
	}
	for _, ps := range topo.Pods {
		if cfg.Hosts < ps.Host {
			cfg.Hosts = ps.Host
		}
	}
	if topo.PodsPerHost > 0 {
		cfg.PodBits = min(max(cfg.PodBits, 24), lab.PodBitsFor(topo.PodsPerHost))
	}
	l, err := lab.New(cfg)
	if err != nil {
		return nil, err
	}
	d = &Deployment{Lab: l, Mode: m, b: b, pods: map[string]*podState{}}
	defer func() {
		if err != nil {
			_ = l.Teardown()
		}
	}()
	what := ""
	if topo.Services {
		what = " for services"
	}
	b.logf("building %s%s (lab %s)", m.Name(), what, l.ID)
	t0 := time.Now()
	if err := l.Create(ctx); err != nil {
		return nil, err
	}
	for _, h := range l.Hosts {
		for _, kv := range lab.Sysctls {
			if err := l.Sysctl(ctx, h.NetNS, kv[0], kv[1]); err != nil {
				return nil, err
			}
		}
	}
	if err := m.Setup(ctx, l); err != nil {
		return nil, fmt.Errorf("setting up: %w", err)
	}
	if topo.Services {
		if err := prepareServiceNodes(ctx, l); err != nil {
			return nil, err
		}
	}
	// the pods of their own are built at once; a pod sharing another's
	// namespace (With) is that pod
	var reqs []netmode.PodReq
	for _, ps := range topo.Pods {
		if ps.With == "" {
			reqs = append(reqs, netmode.PodReq{Host: l.Hosts[ps.Host-1], Name: ps.Name})
		}
	}
	built, err := netmode.AddPods(ctx, m, l, reqs)
	if err != nil {
		return nil, err
	}
	lpods := map[string]*lab.Pod{}
	for i, r := range reqs {
		lpods[r.Name] = built[i]
	}
	order := make([]*lab.Pod, len(topo.Pods))
	for i, ps := range topo.Pods {
		pod := lpods[ps.Name]
		if ps.With != "" {
			if pod = lpods[ps.With]; pod == nil {
				return nil, fmt.Errorf("pod %s shares with %s, which comes later or not at all", ps.Name, ps.With)
			}
			lpods[ps.Name] = pod
		} else if h := l.Hosts[ps.Host-1]; topo.OwnAddresses && (!pod.Owned || !pod.IP.IsValid() || pod.IP == h.IP) {
			return nil, backend.Skip(fmt.Sprintf("%s pods share their host's address; services need pods with their own (bridge, vxlan, host-gw, ...)", m.Name()))
		}
		order[i] = pod
	}
	for _, pod := range built {
		if pod.Owned {
			for _, kv := range lab.Sysctls {
				_ = l.Sysctl(ctx, pod.NetNS, kv[0], kv[1])
			}
		}
	}
	// the agents start at once too: each is a process to exec and wait for
	states := make([]*podState, len(topo.Pods))
	err = l.Each(ctx, len(topo.Pods), func(ctx context.Context, i int) error {
		ps, pod := topo.Pods[i], order[i]
		key := "agent-" + ps.Name
		if ps.NoAgent {
			states[i] = &podState{Pod: backend.Pod{Name: ps.Name, Host: pod.Host.Index, IP: pod.IP, NetNS: pod.NetNS}, lp: pod, key: key}
			return nil
		}
		c, pid, err := b.startAgent(ctx, l, pod, key, ps.CPU)
		if err != nil {
			return err
		}
		states[i] = &podState{
			Pod: backend.Pod{Name: ps.Name, Host: pod.Host.Index, IP: pod.IP, Agent: c, PID: pid, NetNS: pod.NetNS},
			lp:  pod, key: key,
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, ps := range topo.Pods {
		d.pods[ps.Name] = states[i]
		d.order = append(d.order, ps.Name)
	}
	if topo.IdlePods > 0 {
		var idle []netmode.PodReq
		for i := 1; i <= topo.IdlePods; i++ {
			for _, h := range l.Hosts {
				idle = append(idle, netmode.PodReq{Host: h, Name: "i" + strconv.Itoa(i)})
			}
		}
		if _, err := netmode.AddPods(ctx, m, l, idle); err != nil {
			return nil, fmt.Errorf("idle pods: %w", err)
		}
		b.logf("  %d idle pods on each of %d hosts", topo.IdlePods, len(l.Hosts))
	}
	if topo.Tuning != "" && topo.Tuning != tuning.None {
		prof, err := tuning.Get(topo.Tuning)
		if err != nil {
			return nil, err
		}
		rec, err := tuning.Apply(ctx, l, prof)
		if err != nil {
			return nil, err
		}
		d.Tuned = &rec
		b.logf("  tuned %s: %d namespaces, NOTRACK in %d, RPS on %d devices", prof.Name, rec.Namespaces, rec.NoTrack, rec.RPSDevices)
	}
	d.Ready = time.Since(t0)
	b.logf("  %s ready in %v", m.Name(), d.Ready.Round(time.Millisecond))
	return d, nil
}

// startAgent starts an agent in pod (on CPU cpu when cpu >= 0), its log
// named key, and waits until it answers.
func (b *Backend) startAgent(ctx context.Context, l *lab.Lab, pod *lab.Pod, key string, cpu int) (*agent.Client, int, error) {
	sockPath := l.Dir + "/" + key + ".sock"
	argv := append(append([]string{}, b.Agent...), "--listen", "unix:"+sockPath, "--parent", fmt.Sprint(os.Getpid()))
	if cpu >= 0 {
		argv = append([]string{"taskset", "-c", fmt.Sprint(cpu)}, argv...)
	}
	proc, err := l.Start(pod.NetNS, key, argv...)
	if err != nil {
		return nil, 0, err
	}
	c := &agent.Client{Network: "unix", Addr: sockPath}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pid, err := c.Wait(wctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		select {
		case <-proc.Done():
			return nil, 0, fmt.Errorf("agent in %s exited: %s", pod.NetNS, l.LogTail(key, 5))
		default:
		}
		return nil, 0, err
	}
	// a job the agent does not answer in time names what became of it
	c.Health = agent.ProcessHealth(pid)
	return c, pid, nil
}

// ID implements backend.Deployment.
func (d *Deployment) ID() string { return d.Lab.ID }

// Network implements backend.Deployment.
func (d *Deployment) Network() string { return d.Mode.Name() }

// Pod implements backend.Deployment.
func (d *Deployment) Pod(name string) *backend.Pod {
	if p := d.pods[name]; p != nil {
		return &p.Pod
	}
	return nil
}

// LabPod is the lab's pod behind a deployment pod.
func (d *Deployment) LabPod(name string) *lab.Pod {
	if p := d.pods[name]; p != nil {
		return p.lp
	}
	return nil
}

// Pods lists the pods in the order they were made.
func (d *Deployment) Pods() []string { return append([]string(nil), d.order...) }

// Dial implements backend.Deployment through the mode's Expose.
func (d *Deployment) Dial(ctx context.Context, from, to, proto string, port int) (netip.AddrPort, error) {
	f, t := d.pods[from], d.pods[to]
	if f == nil || t == nil {
		return netip.AddrPort{}, fmt.Errorf("no pod %q or %q in %s", from, to, d.Lab.ID)
	}
	return d.Mode.Expose(ctx, d.Lab, f.lp, t.lp, proto, port)
}

// Params implements backend.Deployment.
func (d *Deployment) Params() map[string]any {
	p := map[string]any{"underlay_mtu": d.Lab.Cfg.MTU}
	for k, v := range d.Lab.Cfg.ModeOptions { // e.g. weave's encrypt: part of what was measured
		p["mode_"+k] = v
	}
	return p
}

// AgentLog implements backend.Deployment.
func (d *Deployment) AgentLog(pod string) string {
	p := d.pods[pod]
	if p == nil {
		return ""
	}
	return strings.TrimSpace(d.Lab.LogTail(p.key, 3))
}

// Teardown implements backend.Deployment.
func (d *Deployment) Teardown() error { return d.Lab.Teardown() }

// Commands implements backend.Recorder: every command the lab ran so far.
func (d *Deployment) Commands() []string { return d.Lab.Commands() }

// Environment records the lab's offloads and sysctls (from its first host).
func (d *Deployment) Environment(ctx context.Context, env *result.Environment) {
	if d.Tuned != nil {
		env.Tunings = tuning.Merge(env.Tunings, *d.Tuned)
	}
	if env.Offloads != nil {
		return
	}
	l := d.Lab
	h := l.Hosts[0]
	env.UnderlayMTU = l.Cfg.MTU
	env.Offloads = map[string]string{}
	if out, err := l.In(ctx, h.NetNS, "ethtool", "-k", h.Dev); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch k {
			case "tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload",
				"tx-checksumming", "rx-checksumming", "scatter-gather", "large-receive-offload":
				env.Offloads[k] = strings.Fields(v)[0]
			}
		}
	} else {
		env.Offloads["unknown"] = "ethtool not installed (apt-get install ethtool)"
	}
	if env.Sysctls == nil {
		env.Sysctls = map[string]string{}
	}
	args := append([]string{"sysctl", "-e"}, NamespaceSysctls...)
	if out, err := l.In(ctx, h.NetNS, args...); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if ok {
				env.Sysctls["lab:"+strings.TrimSpace(k)] = strings.Join(strings.Fields(v), " ")
			}
		}
	}
}

// MachineCPU implements backend.CPUMeter: the lab's namespaces share this
// machine's kernel, so its /proc/stat counts every CPU the cell cost,
// softirq included.
func (d *Deployment) MachineCPU(context.Context) (ground.CPUTimes, error) {
	return hostprobe.MachineCPU()
}

// RxBytes implements backend.RxCounter.
func (d *Deployment) RxBytes(ctx context.Context, pod, peer string) (uint64, bool) {
	p, q := d.pods[pod], d.pods[peer]
	if p == nil || q == nil {
		return 0, false
	}
	dev := p.lp.Dev
	if p.lp.NetNS == q.lp.NetNS {
		dev = "lo"
	}
	if dev == "" {
		return 0, false
	}
	out, err := d.Lab.In(ctx, p.lp.NetNS, "cat", "/sys/class/net/"+dev+"/statistics/rx_bytes")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	return v, err == nil
}

// DaemonCPUSeconds implements backend.DaemonMeter where the mode has daemons.
func (d *Deployment) DaemonCPUSeconds() (float64, bool) {
	if dm, ok := d.Mode.(netmode.DaemonCPU); ok {
		return dm.DaemonCPUSeconds(d.Lab), true
	}
	return 0, false
}

// SNMP implements backend.SNMPReader: /proc/net/snmp read inside the
// pod's namespace (the counters are per network namespace).
func (d *Deployment) SNMP(ctx context.Context, pod string) (map[string]int64, error) {
	p := d.pods[pod]
	if p == nil {
		return nil, fmt.Errorf("no pod %q", pod)
	}
	out, err := d.Lab.In(ctx, p.lp.NetNS, "cat", "/proc/net/snmp")
	if err != nil {
		return nil, err
	}
	return hostprobe.ParseSNMP(string(out)), nil
}

// Allows implements backend.Backend through the mode's placements.
func (b *Backend) Allows(network string, p ground.Placement) (bool, string) {
	m, err := netmode.Get(network)
	if err != nil {
		return false, err.Error()
	}
	return netmode.Allows(m, p)
}

// Placements implements backend.Backend.
func (b *Backend) Placements(network string) ([]ground.Placement, error) {
	m, err := netmode.Get(network)
	if err != nil {
		return nil, err
	}
	return m.Placements(), nil
}
