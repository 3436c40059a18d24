// Package dockerlab is the docker-lab backend: real Docker, multi-host,
// on one machine. cnperf builds its lab (a switch and a network namespace
// per emulated host), starts one Docker engine per host inside that
// host's namespace — its own data root, exec root, socket, pid file,
// config file, cgroups and containerd, all under the run's folder
// /run/cnperf/ID (see engine.go) — imports the agent image built from the
// cnperf binary into each (nothing is pulled), and, for the overlay,
// joins the engines in a swarm over the lab's underlay. The pods are
// containers on those engines, on Docker's own networks: docker0 (bridge),
// -p across hosts (nat, docker-proxy on or off), --network host, an
// attachable swarm overlay (docker-overlay: libnetwork's VXLAN, with
// gossip, optionally IPsec-encrypted), and a macvlan network whose parent
// is each lab host's own underlay link (see macvlan.go). The network names are cnperf's, so
// that `--backend lab,docker-lab` puts each beside the lab's replica.
//
// The machine's own Docker engine is never contacted, and nothing of the
// engines reaches the machine's namespaces: their processes sit under the
// run's cgroup, so teardown and `cnperf clean` kill them, also after a
// kill -9 of cnperf.
package dockerlab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/dockerengine"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
)

// Name is the backend's name.
const Name = "docker-lab"

// ClusterSuffix ends the lab id of a run's engines (see clusterID).
const ClusterSuffix = "s0"

// The container modes.
const (
	modeHost    = "host"
	modeBridge  = "bridge" // docker0, the engine's default network
	modeOverlay = "overlay"
	modeMacvlan = "macvlan" // the cluster's macvlan network on each engine
)

// netKind is how a network of cnperf maps to Docker's on the engines.
type netKind struct {
	placements []ground.Placement // preferred first
	mode       string
	publish    bool // nat: the server is reached through a port published on its host
	summary    string
}

var kinds = map[string]netKind{
	"baseline": {placements: []ground.Placement{ground.CrossHost, ground.SameHost}, mode: modeHost,
		summary: "no container networking: --network host on each lab host's engine"},
	"host": {placements: []ground.Placement{ground.CrossHost, ground.SameHost}, mode: modeHost,
		summary: "--network host: the lab host's own namespace"},
	"bridge": {placements: []ground.Placement{ground.SameHost}, mode: modeBridge,
		summary: "docker0, the engine's default bridge network, a veth per container"},
	"nat": {placements: []ground.Placement{ground.CrossHost, ground.SameHost}, mode: modeBridge, publish: true,
		summary: "docker run -p on docker0: the server's port published on its host's underlay address and dialled there"},
	"docker-overlay": {placements: []ground.Placement{ground.CrossHost, ground.SameHost}, mode: modeOverlay,
		summary: "a swarm's attachable overlay network (libnetwork: VXLAN 4789, gossip), containers joined with docker run --network"},
	"macvlan": {placements: []ground.Placement{ground.CrossHost, ground.SameHost}, mode: modeMacvlan,
		summary: "a Docker macvlan network (bridge mode) on each engine, parent the lab host's underlay link: the pod network on-link, each engine's addresses from its host's /24; no container reaches its own host's underlay address"},
}

// Networks lists the networks the backend deploys.
func Networks() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func unknown(network string) error {
	hint := ""
	switch network {
	case "overlay":
		hint = " (Docker's swarm overlay is docker-overlay)"
	case "container", "none":
		hint = " (--backend docker runs " + network + " on this machine's engine)"
	}
	return fmt.Errorf("docker-lab has no network %q%s; use one of %s", network, hint, strings.Join(Networks(), ", "))
}

// The backend's options (--mode-opt key=value).
var (
	optUserlandProxy = option.Spec{Name: "userland-proxy", Kind: option.Bool, Default: "true",
		Help: "docker-lab: the engines' --userland-proxy (docker-proxy serves published ports; false: kernel NAT only)"}
	optEncrypt = option.Spec{Name: "encrypt", Kind: option.Bool, Default: "false",
		Help: "docker-lab: encrypt the overlay (docker network create --opt encrypted: IPsec ESP between hosts)"}
	optSeccomp = option.Spec{Name: "seccomp", Kind: option.Enum, Values: []string{"default", "unconfined"}, Default: "default",
		Help: "docker-lab: the agents' containers' seccomp profile (unconfined: docker run --security-opt seccomp=unconfined)"}
)

// ipsecNeeds are the kernel options Docker's encrypted overlay needs: ESP
// in transport mode with AES-GCM (rfc4106), programmed over xfrm netlink,
// and the iptables matches it marks and filters the VXLAN packets with.
var ipsecNeeds = [][2]string{
	{"CONFIG_XFRM_USER", "xfrm netlink"},
	{"CONFIG_INET_ESP", "IPsec ESP"},
	{"CONFIG_CRYPTO_GCM", "AES-GCM"},
	{"CONFIG_NETFILTER_XT_MATCH_POLICY", "iptables policy match"},
	{"CONFIG_NETFILTER_XT_MATCH_U32", "iptables u32 match"},
}

// Backend deploys topologies on Docker engines it starts in a lab.
type Backend struct {
	Lab    lab.Config // MTU, underlay, mode options (the backend's), run id
	Binary string     // the cnperf binary the agent image is made from
	Log    func(format string, args ...any)
	// LookPath finds a command (exec.LookPath; tests replace it).
	LookPath func(string) (string, error)
	// Kernel is the running kernel's configuration (tests replace it).
	Kernel netmode.KernelConfig

	mu     sync.Mutex
	run    string
	seq    int
	c      *cluster
	kernel bool
}

// New makes a docker-lab backend.
func New(cfg lab.Config, binary string, logf func(string, ...any)) *Backend {
	return &Backend{Lab: cfg, Binary: binary, Log: logf}
}

// Name implements backend.Backend.
func (b *Backend) Name() string { return Name }

func (b *Backend) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

func (b *Backend) lookPath(c string) (string, error) {
	if b.LookPath != nil {
		return b.LookPath(c)
	}
	return exec.LookPath(c)
}

func (b *Backend) kernelConfig() netmode.KernelConfig {
	if b.LookPath != nil { // a test's: its Kernel, as given
		return b.Kernel
	}
	return netmode.RunningKernel()
}

func (b *Backend) binary() string {
	if b.Binary != "" {
		return b.Binary
	}
	bin, _ := os.Executable()
	return bin
}

func (b *Backend) userlandProxy() bool {
	v, err := strconv.ParseBool(option.Get([]option.Spec{optUserlandProxy}, b.Lab.ModeOptions, optUserlandProxy.Name))
	return err != nil || v
}

func (b *Backend) encrypt() bool {
	v, _ := strconv.ParseBool(option.Get([]option.Spec{optEncrypt}, b.Lab.ModeOptions, optEncrypt.Name))
	return v
}

// tools are the commands docker-lab runs, each with the Debian package
// that has it.
var tools = [][2]string{
	{"dockerd", "docker.io"},
	{"containerd", "containerd"},
	{"containerd-shim-runc-v2", "containerd"},
	{"runc", "runc"},
	{"iptables", "iptables"},
	{"unshare", "util-linux"},
	{"mount", "mount"},
	{"sh", "dash"},
}

// Check implements backend.Backend: a network docker-lab has, root, the
// engine's programs installed, and what the kernel must have.
func (b *Backend) Check(network string) error {
	k, ok := kinds[network]
	if !ok {
		return unknown(network)
	}
	if os.Geteuid() != 0 && b.LookPath == nil {
		return errors.New("docker-lab needs root: it starts Docker engines in network namespaces; run it as root")
	}
	need := tools
	if k.publish && b.userlandProxy() {
		need = append(need[:len(need):len(need)], [2]string{"docker-proxy", "docker.io"})
	}
	for _, t := range need {
		if _, err := b.lookPath(t[0]); err != nil {
			return fmt.Errorf("docker-lab needs %s, not found in PATH; install it (apt-get install %s)", t[0], t[1])
		}
	}
	if k.mode == modeOverlay && !b.kernelConfig().Has("CONFIG_VXLAN") {
		return errors.New("docker-lab's docker-overlay needs CONFIG_VXLAN (VXLAN devices); this kernel lacks it")
	}
	if k.mode == modeMacvlan && !b.kernelConfig().Has("CONFIG_MACVLAN") {
		return errors.New("docker-lab's macvlan needs CONFIG_MACVLAN (macvlan devices); this kernel lacks it: use docker-overlay or bridge")
	}
	return b.CheckOptions(network, b.Lab.ModeOptions)
}

// Options implements backend.Optioner.
func (b *Backend) Options(network string) []option.Spec {
	if _, ok := kinds[network]; !ok {
		return nil
	}
	switch network {
	case "nat":
		return []option.Spec{optUserlandProxy, optSeccomp}
	case "docker-overlay":
		return []option.Spec{optEncrypt, optSeccomp}
	}
	return []option.Spec{optSeccomp}
}

// seccomp is the containers' seccomp profile: default or unconfined.
func (b *Backend) seccomp() string {
	return option.Get([]option.Spec{optSeccomp}, b.Lab.ModeOptions, optSeccomp.Name)
}

// CheckOptions implements backend.Optioner: encrypt=true needs IPsec in
// the kernel.
func (b *Backend) CheckOptions(network string, set map[string]string) error {
	if network != "docker-overlay" {
		return nil
	}
	if v, _ := strconv.ParseBool(set[optEncrypt.Name]); !v {
		return nil
	}
	k := b.kernelConfig()
	var missing []string
	for _, n := range ipsecNeeds {
		if !k.Has(n[0]) {
			missing = append(missing, n[0]+" ("+n[1]+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("docker-overlay with encrypt=true needs IPsec in the kernel; this kernel lacks %s: drop --mode-opt encrypt=true or boot a kernel with them", strings.Join(missing, ", "))
	}
	return nil
}

// Allows implements backend.Backend.
func (b *Backend) Allows(network string, p ground.Placement) (bool, string) {
	k, ok := kinds[network]
	if !ok {
		return false, unknown(network).Error()
	}
	if slices.Contains(k.placements, p) {
		return true, ""
	}
	if p == ground.SamePod {
		return false, "docker-lab runs no two containers in one pod; use --backend docker for same-pod, or --placement " + ground.JoinPlacements(k.placements)
	}
	return false, fmt.Sprintf("on docker-lab, %s runs %s; use --placement %s", network, ground.JoinPlacements(k.placements), k.placements[0])
}

// Placements implements backend.Backend.
func (b *Backend) Placements(network string) ([]ground.Placement, error) {
	k, ok := kinds[network]
	if !ok {
		return nil, unknown(network)
	}
	return k.placements, nil
}

// nextID names the next deployment: d1, d2...
func (b *Backend) nextID() (run, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.run == "" {
		b.run = b.Lab.ID
		if b.run == "" {
			b.run = lab.NewID()
		}
	}
	b.seq++
	return b.run, "d" + strconv.Itoa(b.seq)
}

// acquire returns the run's cluster, building it the first time, with a
// reference for the caller; release gives it back.
func (b *Backend) acquire(ctx context.Context, run string, hosts int) (*cluster, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		if len(clusterID(run)) > lab.MaxIDLen {
			return nil, fmt.Errorf("docker-lab: run id %q is too long for its engines' lab id %q; use at most %d characters (CNPERF_RUN_ID)", run, clusterID(run), lab.MaxIDLen-len(ClusterSuffix))
		}
		c, err := b.newCluster(ctx, run, hosts)
		if err != nil {
			return nil, err
		}
		b.c = c
	}
	if hosts > len(b.c.lab.Hosts) {
		return nil, backend.Skip(fmt.Sprintf("docker-lab's engines stand on %d hosts, this topology needs %d", len(b.c.lab.Hosts), hosts))
	}
	b.c.refs++
	return b.c, nil
}

// release drops a reference; the last one tears the cluster down. last
// says whether it was the last.
func (b *Backend) release(c *cluster) (last bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c.refs--
	if c.refs > 0 {
		return false, nil
	}
	if b.c == c {
		b.c = nil
	}
	return true, c.teardown()
}

// lastRef says whether c's only reference is the caller's.
func (b *Backend) lastRef(c *cluster) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return c.refs <= 1
}

// Deployment is a topology deployed as containers on the cluster's engines.
type Deployment struct {
	backend.Base[*pod]
	id, run  string
	kind     netKind
	b        *Backend
	c        *cluster
	dir      string // control folder (bind-mounted at /ctl)
	netName  string // the overlay network, or the cluster's macvlan network
	netHost  int    // the engine the overlay network was created on
	macHosts []int  // the engines whose macvlan network this one holds a reference to
	labels   map[string]string
	order    []string
	calls    []string
	Ready    time.Duration
	done     bool
	mu       sync.Mutex
}

type pod struct {
	backend.Pod
	spec      backend.PodSpec
	en        *engine
	container string
	ports     []string       // "5201/tcp" published (nat)
	published map[string]int // "5201/tcp" -> host port
}

const ctlMount = "/ctl"

// Deploy implements backend.Deployment: the engines of the hosts the pods
// are on (started the first time), the swarm and an attachable overlay
// network for docker-overlay, and a container per pod running an agent
// that listens on a unix socket in a control folder of the run's.
func (b *Backend) Deploy(ctx context.Context, topo backend.Topology) (_ backend.Deployment, err error) {
	k, ok := kinds[topo.Network]
	if !ok {
		return nil, unknown(topo.Network)
	}
	if topo.Services {
		return nil, backend.Skip("docker-lab programs no ClusterIP services")
	}
	hosts := max(topo.Hosts, 1)
	for _, ps := range topo.Pods {
		if ps.With != "" {
			return nil, backend.Skip("docker-lab runs no two containers in one pod; use --backend docker for same-pod")
		}
		hosts = max(hosts, ps.Host)
	}
	run, id := b.nextID()
	c, err := b.acquire(ctx, run, hosts)
	if err != nil {
		return nil, err
	}
	d := &Deployment{
		Base: backend.NewBase[*pod](Name, c.lab.ID+"-"+id, topo.Network),
		id:   id, run: run, kind: k, b: b, c: c,
		dir: filepath.Join(c.lab.Dir, id),
		labels: map[string]string{dockerengine.LabelRun: run, dockerengine.LabelDeploy: c.lab.ID + "-" + id,
			dockerengine.LabelPID: strconv.Itoa(os.Getpid())},
	}
	defer func() {
		if err != nil {
			_ = d.Teardown()
		}
	}()
	b.logf("building %s on docker-lab (engines in lab %s, deployment %s)", topo.Network, c.lab.ID, id)
	t0 := time.Now()
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return nil, fmt.Errorf("control folder: %w", err)
	}
	var used []int
	for _, ps := range topo.Pods {
		if !slices.Contains(used, ps.Host) {
			used = append(used, ps.Host)
		}
	}
	sort.Ints(used)
	if k.mode == modeOverlay {
		mgr, err := c.ensureSwarm(ctx)
		if err != nil {
			return nil, err
		}
		d.netName, d.netHost = "cnperf-"+run+"-"+id, mgr.host.Index
		opts := map[string]string{"com.docker.network.driver.mtu": strconv.Itoa(c.lab.Cfg.MTU)}
		if b.encrypt() {
			opts["encrypted"] = ""
		}
		d.call(1, "network create --driver overlay --attachable --opt com.docker.network.driver.mtu=%d%s %s",
			c.lab.Cfg.MTU, map[bool]string{true: " --opt encrypted", false: ""}[b.encrypt()], d.netName)
		if _, err := mgr.e.CreateNetwork(ctx, dockerengine.NetworkConfig{Name: d.netName, Driver: "overlay", Attachable: true,
			CheckDuplicate: true, Labels: d.labels, Options: opts}); err != nil {
			return nil, fmt.Errorf("creating overlay network %s: %w", d.netName, err)
		}
	}
	for _, h := range used {
		if _, err := c.engine(ctx, h); err != nil {
			return nil, err
		}
	}
	if k.mode == modeMacvlan {
		d.netName = c.macvlanName()
		for _, h := range used {
			if err := c.acquireMacvlan(ctx, h); err != nil {
				return nil, err
			}
			d.macHosts = append(d.macHosts, h)
		}
	}
	for _, ps := range topo.Pods {
		en, err := c.engine(ctx, ps.Host)
		if err != nil {
			return nil, err
		}
		p := &pod{spec: ps, en: en, Pod: backend.Pod{Name: ps.Name, Host: ps.Host}}
		d.Pods[ps.Name] = p
		d.order = append(d.order, ps.Name)
		if err := d.start(ctx, p); err != nil {
			return nil, err
		}
	}
	d.Ready = time.Since(t0)
	b.logf("  %s ready in %v", topo.Network, d.Ready.Round(time.Millisecond))
	return d, nil
}

// call notes an API call of the deployment, as the docker command that
// makes it.
func (d *Deployment) call(host int, format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, fmt.Sprintf("docker -H unix://%s ", socketOf(d.c.engineDir(host)))+fmt.Sprintf(format, args...))
}

// networkMode is the container's --network.
func (d *Deployment) networkMode() string {
	switch d.kind.mode {
	case modeHost:
		return "host"
	case modeOverlay, modeMacvlan:
		return d.netName
	}
	return "bridge"
}

// containerConfig is a container running an agent on socket sock.
func (d *Deployment) containerConfig(p *pod, name, mode string) dockerengine.ContainerConfig {
	cfg := dockerengine.ContainerConfig{
		Image:  p.en.image,
		Cmd:    []string{dockerengine.AgentPath, "agent", "--listen", "unix:" + ctlMount + "/" + name + ".sock"},
		Labels: map[string]string{"cnperf.pod": name},
		HostConfig: dockerengine.HostConfig{
			NetworkMode: mode,
			Binds:       []string{d.dir + ":" + ctlMount},
		},
	}
	for k, v := range d.labels {
		cfg.Labels[k] = v
	}
	if d.b.seccomp() == "unconfined" {
		cfg.HostConfig.SecurityOpt = []string{"seccomp=unconfined"}
	}
	if mode != "host" && mode != "none" {
		// the lab's hosts and pods are tuned alike (lab.Sysctls)
		cfg.HostConfig.Sysctls = map[string]string{}
		for _, kv := range lab.Sysctls {
			cfg.HostConfig.Sysctls[kv[0]] = kv[1]
		}
	}
	return cfg
}

// start creates and starts p's container, publishing p.ports on its
// host's underlay address, and waits for its agent.
func (d *Deployment) start(ctx context.Context, p *pod) error {
	sock := p.Name + ".sock"
	_ = os.Remove(filepath.Join(d.dir, sock))
	cfg := d.containerConfig(p, p.Name, d.networkMode())
	if p.spec.CPU >= 0 {
		cfg.HostConfig.CpusetCpus = strconv.Itoa(p.spec.CPU)
	}
	pub := ""
	if len(p.ports) > 0 {
		cfg.ExposedPorts = map[string]struct{}{}
		cfg.HostConfig.PortBindings = map[string][]dockerengine.PortBinding{}
		for _, port := range p.ports {
			cfg.ExposedPorts[port] = struct{}{}
			cfg.HostConfig.PortBindings[port] = []dockerengine.PortBinding{{HostIP: p.en.host.IP.String()}}
			pub += fmt.Sprintf(" -p %s::%s", p.en.host.IP, port)
		}
	}
	name := "cnperf-" + d.run + "-" + d.id + "-" + p.Name
	opts := pub
	for _, o := range cfg.HostConfig.SecurityOpt {
		opts += " --security-opt " + o
	}
	d.call(p.Host, "run -d --name %s --network %s%s -v %s:%s %s %s", name, cfg.HostConfig.NetworkMode, opts, d.dir, ctlMount, cfg.Image, strings.Join(cfg.Cmd, " "))
	cid, err := p.en.e.CreateContainer(ctx, name, cfg)
	if err != nil {
		return fmt.Errorf("creating container %s on %s: %w", name, p.en.host.Name, err)
	}
	p.container = cid
	if err := p.en.e.StartContainer(ctx, cid); err != nil {
		return fmt.Errorf("starting container %s on %s: %w", name, p.en.host.Name, err)
	}
	c := &agent.Client{Network: "unix", Addr: filepath.Join(d.dir, sock)}
	wctx, cancel := context.WithTimeout(ctx, engineWait)
	_, werr := c.Wait(wctx)
	cancel()
	if werr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("agent in container %s on %s: %v%s", name, p.en.host.Name, werr, d.logSuffix(p))
	}
	cj, err := p.en.e.InspectContainer(ctx, cid)
	if err != nil {
		return err
	}
	p.Agent, p.PID = c, cj.State.Pid
	c.Health = p.en.e.AgentHealth(cid, name)
	p.IP = p.en.host.IP
	if d.kind.mode == modeOverlay || d.kind.mode == modeMacvlan {
		p.IP = netip.Addr{}
		if n, ok := cj.NetworkSettings.Networks[d.netName]; ok {
			p.IP, _ = netip.ParseAddr(n.IPAddress)
		}
	} else if d.kind.mode == modeBridge {
		if n, ok := cj.NetworkSettings.Networks["bridge"]; ok {
			p.IP, _ = netip.ParseAddr(n.IPAddress)
		}
	}
	if !p.IP.IsValid() {
		return fmt.Errorf("container %s on %s has no address on %s", name, p.en.host.Name, d.networkMode())
	}
	p.published = map[string]int{}
	for k, bs := range cj.NetworkSettings.Ports {
		for _, pb := range bs {
			if n, err := strconv.Atoi(pb.HostPort); err == nil && n > 0 {
				p.published[k] = n
			}
		}
	}
	for _, port := range p.ports {
		if p.published[port] == 0 {
			return fmt.Errorf("container %s on %s: the engine published no host port for %s", name, p.en.host.Name, port)
		}
	}
	return nil
}

func (d *Deployment) logSuffix(p *pod) string {
	if t := d.AgentLog(p.Name); t != "" {
		return " (container log: " + oneLine(t) + ")"
	}
	return ""
}

// Dial implements backend.Deployment. host: the server's host address;
// bridge and docker-overlay: the server container's address; nat: the
// server's port published on its host's underlay address (Docker
// publishes ports only when a container is created, so the server's
// container is made again with the port, as `docker run -p` would have),
// reached through the host's DNAT, or docker-proxy where the client is on
// the same host and the userland proxy is on.
func (d *Deployment) Dial(ctx context.Context, from, to, proto string, port int) (netip.AddrPort, error) {
	_, t, err := d.Pair(from, to)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if !d.kind.publish {
		return netip.AddrPortFrom(t.IP, uint16(port)), nil
	}
	key := strconv.Itoa(port) + "/" + proto
	if t.published[key] == 0 {
		if err := t.en.e.RemoveContainer(ctx, t.container); err != nil {
			return netip.AddrPort{}, err
		}
		t.ports = append(t.ports, key)
		if err := d.start(ctx, t); err != nil {
			return netip.AddrPort{}, err
		}
	}
	return netip.AddrPortFrom(t.en.host.IP, uint16(t.published[key])), nil
}

// Params implements backend.Deployment.
func (d *Deployment) Params() map[string]any {
	p := map[string]any{"docker_network": d.kind.summary, "underlay_mtu": d.c.lab.Cfg.MTU, "docker_engines": "one per lab host",
		"seccomp": d.b.seccomp()}
	if d.kind.publish {
		p["userland_proxy"] = d.b.userlandProxy()
	}
	if d.kind.mode == modeOverlay {
		p["overlay_encrypted"] = d.b.encrypt()
	}
	if d.kind.mode == modeMacvlan {
		p["macvlan_parent"] = d.c.lab.Hosts[0].Dev + " of each lab host (the underlay link)"
		p["macvlan_subnet"] = d.c.lab.Cfg.PodNet.String()
	}
	return p
}

// AgentLog implements backend.Deployment: the end of the container's log.
func (d *Deployment) AgentLog(name string) string {
	p := d.Pods[name]
	if p == nil {
		return ""
	}
	return p.en.e.LogTail(p.container)
}

// Teardown implements backend.Deployment: while other deployments use the
// engines, this one's containers and network are removed from each; the
// last one's teardown kills the engines with everything on them and
// removes the lab. Harmless twice.
func (d *Deployment) Teardown() error {
	d.mu.Lock()
	if d.done {
		d.mu.Unlock()
		return nil
	}
	d.done = true
	d.mu.Unlock()
	var errs []error
	if !d.b.lastRef(d.c) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.removeObjects(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(d.dir); err != nil {
		errs = append(errs, err)
	}
	if _, err := d.b.release(d.c); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeObjects removes the deployment's containers from every engine,
// then its overlay network from the manager (retried while the workers'
// endpoints on it are still going away), or gives back its references to
// the engines' macvlan network (removed with the last one).
func (d *Deployment) removeObjects(ctx context.Context) error {
	label := dockerengine.LabelDeploy + "=" + d.labels[dockerengine.LabelDeploy]
	d.c.mu.Lock()
	engines := make([]*engine, 0, len(d.c.engines))
	for _, en := range d.c.engines {
		engines = append(engines, en)
	}
	d.c.mu.Unlock()
	var errs []error
	for _, en := range engines {
		cs, err := en.e.Containers(ctx, label)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range cs {
			if err := en.e.RemoveContainer(ctx, c.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if d.kind.mode == modeMacvlan {
		for _, h := range d.macHosts {
			if err := d.c.releaseMacvlan(ctx, h); err != nil {
				errs = append(errs, err)
			}
		}
		d.macHosts = nil
		return errors.Join(errs...)
	}
	if d.netName == "" {
		return errors.Join(errs...)
	}
	mgr := d.c.engines[d.netHost]
	for try := 0; ; try++ {
		ns, err := mgr.e.Networks(ctx, label)
		if err == nil && len(ns) == 0 {
			break
		}
		for _, n := range ns {
			err = mgr.e.RemoveNetwork(ctx, n.ID)
		}
		if err == nil {
			continue
		}
		if try == 50 || ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("overlay network %s: %w", d.netName, err))
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.Join(errs...)
}

// Commands implements backend.Recorder: the lab's commands (the engines'
// start), then the API calls that made the swarm, the network and the
// containers, as docker commands.
func (d *Deployment) Commands() []string {
	d.c.mu.Lock()
	out := append(d.c.lab.Commands(), d.c.calls...)
	d.c.mu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	return append(out, d.calls...)
}
