// Package docker is the Docker backend: the pods of a topology are
// containers on a real Docker engine (the user's, found as the docker CLI
// finds it: DOCKER_HOST, a Docker context, the default socket), each running a cnperf agent from an image built locally
// from the cnperf binary itself (nothing is pulled), on Docker's own
// networks: a user bridge network, host, none, container:ID (shared
// network namespace) and nat (a port published with -p).
//
// The coordinator drives the agents over unix sockets in a folder
// bind-mounted into every container, so the control channel never crosses
// a network, the measured one least of all.
//
// Everything it creates carries the label cnperf.run=<run id> (and
// cnperf.deploy=<deployment id>) and the run id in its name; teardown and
// Clean remove objects by those labels only, so a user's own containers,
// networks and images are never touched. The agent image is kept between
// runs, tagged by the binary's hash.
package docker

import (
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
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/dockerengine"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hostprobe"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/result"
)

// Name is the backend's name.
const Name = "docker"

// StateRoot holds one control folder per deployment (the agents' sockets).
var StateRoot = "/run/cnperf-docker"

// netKind is how a network of cnperf maps to Docker's.
type netKind struct {
	placements []ground.Placement
	// mode is the container's network mode: "host", "none", or "" for the
	// deployment's user bridge network.
	mode    string
	publish bool // nat: the server is reached through a published port
	summary string
}

// kinds are the networks this backend deploys; names are cnperf's, so
// that a Docker result stands beside the lab replica of the same name.
var kinds = map[string]netKind{
	"bridge":    {placements: []ground.Placement{ground.SameHost}, summary: "a user bridge network (docker network create), a veth per container"},
	"nat":       {placements: []ground.Placement{ground.SameHost}, publish: true, summary: "docker run -p: the server's port published on the bridge gateway, dialled there"},
	"host":      {placements: []ground.Placement{ground.SameHost}, mode: "host", summary: "--network host: the machine's own namespace"},
	"baseline":  {placements: []ground.Placement{ground.SameHost}, mode: "host", summary: "no container networking (--network host)"},
	"container": {placements: []ground.Placement{ground.SamePod}, summary: "--network container:ID on a bridge container: one namespace, loopback"},
	"none":      {placements: []ground.Placement{ground.SamePod}, mode: "none", summary: "--network none, the peer by --network container:ID: loopback only"},
}

// Networks lists the networks the backend deploys.
func Networks() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	return sortedKeysOf(out)
}

// noNetwork is the error for a network the backend does not deploy.
// macvlan is refused by design: a Docker macvlan network's parent is a
// link in the engine's network namespace, which for the user's engine is
// this machine's own, and cnperf never changes that namespace; docker-lab
// runs it on each lab host's own underlay link instead.
func noNetwork(network string) error {
	switch network {
	case "macvlan":
		return errors.New("the docker backend cannot run macvlan: its parent link would be in this machine's own network namespace, which cnperf never changes; use --backend docker-lab (a macvlan network on each lab host's underlay link)")
	case "overlay", "docker-overlay":
		return fmt.Errorf("the docker backend has no network %q: one engine is one host; use --backend docker-lab --networks docker-overlay (a swarm of an engine per lab host)", network)
	}
	return fmt.Errorf("the docker backend has no network %q; use one of %s", network, strings.Join(Networks(), ", "))
}

// Backend deploys topologies on a Docker engine.
type Backend struct {
	Host   string // DOCKER_HOST-style address; "" = as the docker CLI resolves it (dockerengine.Resolve)
	Binary string // the cnperf binary the agent image is made from
	RunID  string // "" = a new id
	MTU    int    // the bridge network's MTU (0 = the engine's default)
	Log    func(format string, args ...any)

	mu    sync.Mutex
	seq   int
	eng   *dockerengine.Engine
	image string
}

// New makes a Docker backend.
func New(host, binary, runID string, mtu int, logf func(string, ...any)) *Backend {
	return &Backend{Host: host, Binary: binary, RunID: runID, MTU: mtu, Log: logf}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

func (b *Backend) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// Engine connects to the engine once, negotiating the API version.
func (b *Backend) Engine(ctx context.Context) (*dockerengine.Engine, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eng != nil {
		return b.eng, nil
	}
	e, err := dockerengine.New(b.Host)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.Negotiate(cctx); err != nil {
		return nil, err
	}
	b.eng = e
	return e, nil
}

// Check implements backend.Backend: the network is one Docker has, and an
// engine answers.
func (b *Backend) Check(network string) error {
	if _, ok := kinds[network]; !ok {
		return noNetwork(network)
	}
	_, err := b.Engine(context.Background())
	return err
}

// Allows implements backend.Backend.
func (b *Backend) Allows(network string, p ground.Placement) (bool, string) {
	k, ok := kinds[network]
	if !ok {
		return false, noNetwork(network).Error()
	}
	for _, q := range k.placements {
		if q == p {
			return true, ""
		}
	}
	if p == ground.CrossHost {
		return false, "one Docker engine is one host; use --placement " + ground.JoinPlacements(k.placements)
	}
	return false, fmt.Sprintf("on Docker, %s runs %s", network, ground.JoinPlacements(k.placements))
}

// Placements implements backend.Backend.
func (b *Backend) Placements(network string) ([]ground.Placement, error) {
	k, ok := kinds[network]
	if !ok {
		return nil, noNetwork(network)
	}
	return k.placements, nil
}

// RunIDOf is the run id every deployment of this backend is labelled with.
func (b *Backend) runID() string {
	if b.RunID == "" {
		b.RunID = lab.NewID()
	}
	return b.RunID
}

// nextID names the next deployment: the run id, then the run id + "s2"...
func (b *Backend) nextID() (run, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run = b.runID()
	b.seq++
	if b.seq == 1 {
		return run, run
	}
	return run, run + "s" + strconv.Itoa(b.seq)
}

// ensureImage imports the agent image once per backend.
func (b *Backend) ensureImage(ctx context.Context, e *dockerengine.Engine) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.image != "" {
		return b.image, nil
	}
	bin := b.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return "", err
		}
	}
	ref, err := dockerengine.EnsureImage(ctx, e, bin)
	if err != nil {
		return "", fmt.Errorf("agent image: %w", err)
	}
	b.image = ref
	return ref, nil
}

// Deployment is a topology deployed as containers on one engine.
type Deployment struct {
	backend.Base[*pod]
	id, run string
	kind    netKind
	e       *dockerengine.Engine
	b       *Backend
	dir     string // control folder (bind-mounted at /ctl)
	image   string
	netName string // the user bridge network, if any
	gateway netip.Addr
	labels  map[string]string
	order   []string
	Ready   time.Duration
	// proxy: docker-proxy serves published ports (the engine's
	// userland-proxy), checked again at every port published
	proxy string
}

type pod struct {
	backend.Pod
	spec      backend.PodSpec
	container string         // id
	published map[string]int // "5201/tcp" -> host port
}

const ctlMount = "/ctl"

// waitTimeout bounds an engine call made during teardown.
const waitTimeout = 60 * time.Second

// Deploy implements backend.Backend: a labelled bridge network where the
// mode needs one, then a container per pod, each running an agent that
// listens on a unix socket in the shared control folder.
func (b *Backend) Deploy(ctx context.Context, topo backend.Topology) (_ backend.Deployment, err error) {
	k, ok := kinds[topo.Network]
	if !ok {
		return nil, noNetwork(topo.Network)
	}
	if topo.Hosts > 1 {
		return nil, backend.Skip("one Docker engine is one host; this topology needs " + strconv.Itoa(topo.Hosts))
	}
	if topo.Services {
		return nil, backend.Skip("the docker backend programs no ClusterIP services")
	}
	e, err := b.Engine(ctx)
	if err != nil {
		return nil, err
	}
	image, err := b.ensureImage(ctx, e)
	if err != nil {
		return nil, err
	}
	run, id := b.nextID()
	host, _ := os.Hostname()
	d := &Deployment{
		Base: backend.NewBase[*pod](Name, id, topo.Network),
		id:   id, run: run, kind: k, e: e, b: b, image: image,
		dir:    filepath.Join(StateRoot, id),
		labels: map[string]string{dockerengine.LabelRun: run, dockerengine.LabelDeploy: id, dockerengine.LabelPID: strconv.Itoa(os.Getpid()), dockerengine.LabelHost: host},
	}
	defer func() {
		if err != nil {
			_ = d.Teardown()
		}
	}()
	if k.publish {
		d.proxy = "unknown (remote engine)"
		if e.Local {
			d.proxy = daemonSettings()["userland_proxy"]
		}
	}
	b.logf("building %s on docker (%s)", topo.Network, id)
	t0 := time.Now()
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return nil, fmt.Errorf("control folder: %w", err)
	}
	if k.mode == "" {
		d.netName = "cnperf-" + id
		opts := map[string]string{}
		if b.MTU > 0 {
			opts["com.docker.network.driver.mtu"] = strconv.Itoa(b.MTU)
		}
		nid, err := e.CreateNetwork(ctx, dockerengine.NetworkConfig{Name: d.netName, Driver: "bridge", CheckDuplicate: true, Labels: d.labels, Options: opts})
		if err != nil {
			return nil, fmt.Errorf("creating network %s: %w", d.netName, err)
		}
		n, err := e.InspectNetwork(ctx, nid)
		if err != nil {
			return nil, err
		}
		for _, c := range n.IPAM.Config {
			if a, err := netip.ParseAddr(c.Gateway); err == nil && a.Is4() {
				d.gateway = a
			}
		}
	}
	for _, ps := range topo.Pods {
		if ps.With != "" && d.Pods[ps.With] == nil {
			return nil, fmt.Errorf("pod %s shares with %s, which comes later or not at all", ps.Name, ps.With)
		}
		p := &pod{spec: ps, Pod: backend.Pod{Name: ps.Name, Host: 1}}
		d.Pods[ps.Name] = p
		d.order = append(d.order, ps.Name)
		if err := d.start(ctx, p, ""); err != nil {
			return nil, err
		}
	}
	d.Ready = time.Since(t0)
	b.logf("  %s ready in %v", topo.Network, d.Ready.Round(time.Millisecond))
	return d, nil
}

// start creates and starts p's container (publishing port, "5201/tcp",
// when not empty) and waits for its agent.
func (d *Deployment) start(ctx context.Context, p *pod, port string) error {
	sock := p.Name + ".sock"
	_ = os.Remove(filepath.Join(d.dir, sock))
	cfg := dockerengine.ContainerConfig{
		Image:  d.image,
		Cmd:    []string{dockerengine.AgentPath, "agent", "--listen", "unix:" + ctlMount + "/" + sock},
		Labels: map[string]string{},
		HostConfig: dockerengine.HostConfig{
			Binds: []string{d.dir + ":" + ctlMount},
		},
	}
	for k, v := range d.labels {
		cfg.Labels[k] = v
	}
	cfg.Labels["cnperf.pod"] = p.Name
	if p.spec.CPU >= 0 {
		cfg.HostConfig.CpusetCpus = strconv.Itoa(p.spec.CPU)
	}
	switch {
	case p.spec.With != "":
		cfg.HostConfig.NetworkMode = "container:" + d.Pods[p.spec.With].container
	case d.kind.mode != "":
		cfg.HostConfig.NetworkMode = d.kind.mode
	default:
		cfg.HostConfig.NetworkMode = d.netName
	}
	if port != "" {
		cfg.ExposedPorts = map[string]struct{}{port: {}}
		// published on the bridge's gateway only, not on every address of
		// the machine: reachable from this host, not from the outside
		cfg.HostConfig.PortBindings = map[string][]dockerengine.PortBinding{port: {{HostIP: d.gateway.String(), HostPort: ""}}}
	}
	name := "cnperf-" + d.id + "-" + p.Name
	cid, err := d.e.CreateContainer(ctx, name, cfg)
	if err != nil {
		return fmt.Errorf("creating container %s: %w", name, err)
	}
	p.container = cid
	if err := d.e.StartContainer(ctx, cid); err != nil {
		return fmt.Errorf("starting container %s: %w", name, err)
	}
	c := &agent.Client{Network: "unix", Addr: filepath.Join(d.dir, sock)}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, werr := c.Wait(wctx)
	cancel()
	if werr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		remote := ""
		if !d.e.Local {
			// the control folder is bind-mounted from the engine's file
			// system, which must be this machine's
			remote = fmt.Sprintf("; the agents are driven through %s, bind-mounted from the engine's machine: is %s on another machine? run cnperf there", d.dir, d.e.Where)
		}
		return fmt.Errorf("agent in container %s: %v%s%s", name, werr, d.logSuffix(p), remote)
	}
	cj, err := d.e.InspectContainer(ctx, cid)
	if err != nil {
		return err
	}
	p.Agent, p.PID = c, cj.State.Pid
	c.Health = d.e.AgentHealth(cid, name)
	p.IP = netip.IPv4Unspecified()
	if d.kind.mode == "host" {
		p.IP = netip.MustParseAddr("127.0.0.1")
	}
	if p.spec.With != "" {
		p.IP = d.Pods[p.spec.With].IP
	}
	for _, n := range cj.NetworkSettings.Networks {
		if a, err := netip.ParseAddr(n.IPAddress); err == nil {
			p.IP = a
		}
	}
	p.published = map[string]int{}
	for k, bs := range cj.NetworkSettings.Ports {
		for _, pb := range bs {
			if n, err := strconv.Atoi(pb.HostPort); err == nil && n > 0 {
				p.published[k] = n
			}
		}
	}
	if port != "" {
		if p.published[port] == 0 {
			return fmt.Errorf("container %s: the engine published no host port for %s", name, port)
		}
		if d.e.Local {
			d.proxy = strconv.FormatBool(proxyServes(p.published[port]))
		}
	}
	return nil
}

func (d *Deployment) logSuffix(p *pod) string {
	if t := d.AgentLog(p.Name); t != "" {
		return " (container log: " + strings.ReplaceAll(t, "\n", " | ") + ")"
	}
	return ""
}

// Dial implements backend.Deployment. Pods sharing a namespace (host
// mode, container:ID) dial loopback; bridge pods the server's address;
// nat recreates the server's container with port published (Docker
// publishes ports only when a container is created), on the bridge
// gateway, and dials that: the path `docker run -p` gives a peer on the
// same host, docker-proxy or hairpin NAT as the engine is configured.
func (d *Deployment) Dial(ctx context.Context, from, to, proto string, port int) (netip.AddrPort, error) {
	f, t, err := d.Pair(from, to)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if d.kind.mode != "" || t.spec.With == from || f.spec.With == to || (f.spec.With != "" && f.spec.With == t.spec.With) {
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), nil
	}
	if !d.kind.publish {
		return netip.AddrPortFrom(t.IP, uint16(port)), nil
	}
	key := strconv.Itoa(port) + "/" + proto
	if t.published[key] == 0 {
		if err := d.e.RemoveContainer(ctx, t.container); err != nil {
			return netip.AddrPort{}, err
		}
		if err := d.start(ctx, t, key); err != nil {
			return netip.AddrPort{}, err
		}
	}
	return netip.AddrPortFrom(d.gateway, uint16(t.published[key])), nil
}

// Params implements backend.Deployment.
func (d *Deployment) Params() map[string]any {
	p := map[string]any{"docker_network": d.kind.summary}
	if d.netName != "" && d.b.MTU > 0 {
		p["underlay_mtu"] = d.b.MTU
	}
	if d.kind.publish {
		p["docker_proxy"] = d.proxy
	}
	return p
}

// AgentLog implements backend.Deployment: the end of the container's log.
func (d *Deployment) AgentLog(name string) string {
	p := d.Pods[name]
	if p == nil {
		return ""
	}
	return d.e.LogTail(p.container)
}

// Teardown implements backend.Deployment: every container and network
// labelled with this deployment's id, whether or not Deploy got to record
// it, then the control folder. Harmless twice.
func (d *Deployment) Teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	err := dockerengine.RemoveLabelled(ctx, d.e, dockerengine.LabelDeploy+"="+d.id)
	if rerr := os.RemoveAll(d.dir); rerr != nil && err == nil {
		err = rerr
	}
	_ = os.Remove(StateRoot) // only when empty
	return err
}

// Environment records the engine: version, API, storage driver, cgroup
// driver, iptables and docker-proxy settings.
func (d *Deployment) Environment(ctx context.Context, env *result.Environment) {
	if env.Docker != nil {
		return
	}
	m := map[string]string{"host": d.e.Where, "image": d.image}
	d.e.RecordVersions(m)
	if in, err := d.e.EngineInfo(ctx); err == nil {
		m["storage_driver"] = in.Driver
		m["cgroup_driver"] = in.CgroupDriver
		m["ipv4_forwarding"] = strconv.FormatBool(in.IPv4Forwarding)
		m["bridge_nf_call_iptables"] = bridgeNf(in.BridgeNfIptables, d.e.Local)
		m["security_options"] = strings.Join(in.SecurityOptions, ",")
		m["swarm"] = in.Swarm.LocalNodeState
	}
	if d.e.Local {
		for k, v := range daemonSettings() {
			m[k] = v
		}
	}
	env.Docker = m
}

// bridgeNf is bridge-nf-call-iptables as the engine reports it or, from
// API 1.50 on (which no longer does), as this machine's sysctl has it
// for a local engine.
func bridgeNf(reported *bool, local bool) string {
	if reported != nil {
		return strconv.FormatBool(*reported)
	}
	if local {
		b, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-iptables")
		if err != nil {
			return "false (br_netfilter not loaded)"
		}
		return strconv.FormatBool(strings.TrimSpace(string(b)) == "1")
	}
	return "unknown (not reported from dockerengine.Engine API 1.50 on)"
}

// MachineCPU implements backend.CPUMeter where the engine shares this
// machine's kernel.
func (d *Deployment) MachineCPU(context.Context) (ground.CPUTimes, error) {
	if !d.e.Local {
		return ground.CPUTimes{}, errors.New("remote engine")
	}
	return hostprobe.MachineCPU()
}

// RxBytes implements backend.RxCounter: the receiving container's
// interface counter read through /proc/PID/net/dev (loopback when the two
// share a namespace).
func (d *Deployment) RxBytes(_ context.Context, name, peer string) (uint64, bool) {
	p, q := d.Pods[name], d.Pods[peer]
	if !d.e.Local || p == nil || q == nil || p.PID == 0 {
		return 0, false
	}
	return hostprobe.RxBytes(p.PID, q.PID, "eth0")
}

// SNMP implements backend.SNMPReader: /proc/PID/net/snmp is the pod's
// namespace's.
func (d *Deployment) SNMP(_ context.Context, name string) (map[string]int64, error) {
	p := d.Pods[name]
	if !d.e.Local || p == nil || p.PID == 0 {
		return nil, errors.New("no local pid")
	}
	return hostprobe.SNMP(p.PID)
}

// DaemonCPUSeconds implements backend.DaemonMeter for nat on a local
// engine: the CPU time of the docker-proxy processes serving the
// deployment's published ports (the user-space proxy in the path).
func (d *Deployment) DaemonCPUSeconds() (float64, bool) {
	if !d.kind.publish || !d.e.Local {
		return 0, false
	}
	var ports []int
	for _, p := range d.Pods {
		for _, hp := range p.published {
			ports = append(ports, hp)
		}
	}
	var total float64
	for _, pid := range proxyPIDs(ports) {
		total += hostprobe.ProcCPUSeconds(pid)
	}
	return total, true
}
