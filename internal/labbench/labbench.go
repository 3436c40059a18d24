// Package labbench is `cnperf bench lab`: how fast cnperf builds a lab of
// many pods, proves every pod reachable, and tears it down. It builds the
// hosts and the network's Setup, adds every pod at once (lab.Config.Workers
// at a time, through netlink), pings every pod from a pod on another host
// (one raw ICMP socket per probing pod, every target at once), tears the lab
// down and, apart, waits for the kernel to free the namespaces. No agent
// runs in these pods: what is timed is the network's construction.
package labbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/ping"
	"github.com/cnperf/cnperf/internal/netmode"
)

// Config is one benchmark.
type Config struct {
	Network     string
	Hosts       int
	PodsPerHost int
	// Workers bounds what is built or deleted at once (0: the lab's
	// default); Commands builds by running each recorded command line
	// instead of through netlink, to compare the two.
	Workers  int
	Commands bool
	// Neighbours is how pods get their neighbour (ARP) entries: dynamic
	// (ARP, as the real networks), static (permanent entries,
	// lab.Config.StaticNeighbours), or auto (default): static when the
	// lab's talking pods would need more entries than the kernel's
	// shared table has room for.
	Neighbours string
	ID         string        // lab id (default random)
	Limit      time.Duration // how long every pod has to answer (default 60 s)
	// KernelWait is how long to watch for the kernel freeing the deleted
	// namespaces (0: not watched; KernelCleanupS is then -1).
	KernelWait time.Duration
}

// MaxPods bounds Hosts × PodsPerHost: the addresses of a /16 pod network,
// and the machine's descriptors and memory for a thousand namespaces.
const MaxPods = 10000

// Validate reports a configuration that cannot run, naming the fix.
func (c *Config) Validate() error {
	switch {
	case c.Hosts < 1 || c.Hosts > 100:
		return fmt.Errorf("--hosts %d; use 1 to 100", c.Hosts)
	case c.PodsPerHost < 2 || c.PodsPerHost > 1021:
		return fmt.Errorf("--pods-per-host %d; use 2 to 1021 (one pod subnet of at most /22 per host)", c.PodsPerHost)
	case c.Hosts*c.PodsPerHost > MaxPods:
		return fmt.Errorf("%d pods; use at most %d in all", c.Hosts*c.PodsPerHost, MaxPods)
	case c.Neighbours != "" && c.Neighbours != "auto" && c.Neighbours != "static" && c.Neighbours != "dynamic":
		return fmt.Errorf("--neighbours %q; use auto, static or dynamic", c.Neighbours)
	case c.Workers < 0:
		return fmt.Errorf("--workers %d; use 1 or more, or leave it out", c.Workers)
	}
	return nil
}

// PodBits is the per-host pod prefix holding n pods (lab.PodBitsFor).
func PodBits(n int) int { return lab.PodBitsFor(n) }

// Kind is a bench result file as the output rule (package cli) knows it:
// Result's JSON, whose first key is network.
var Kind = cli.FirstKeyJSON("a cnperf bench result", "network", "pods_per_host")

// Result is what one benchmark measured; its JSON is the `--out` file.
type Result struct {
	Network     string `json:"network"`
	Hosts       int    `json:"hosts"`
	PodsPerHost int    `json:"pods_per_host"`
	Pods        int    `json:"pods"`
	Executor    string `json:"executor"` // netlink or commands
	Workers     int    `json:"workers"`
	// Probe says where each pod was pinged from: cross-host (a pod on
	// the next host), or host, for a network that joins no two hosts:
	// its own host's namespace, through the bridge's gateway address,
	// as a kubelet's health check comes (a pod on the same host would
	// need a dynamic neighbour entry for each target).
	Probe string `json:"probe"`
	// Neighbours is how pods got their neighbour entries (static or
	// dynamic) and Table why: the kernel's one neighbour table, shared
	// by every namespace, against what the lab needs.
	Neighbours string     `json:"neighbours"`
	Table      NeighTable `json:"neighbour_table"`
	// BuildS is from the first namespace to the last pod's route:
	// HostsS (the hosts on the underlay), SetupS (the network's Setup),
	// PodsS (every pod).
	BuildS float64 `json:"build_s"`
	HostsS float64 `json:"hosts_s"`
	SetupS float64 `json:"setup_s"`
	PodsS  float64 `json:"pods_s"`
	// BuildCPUS is the CPU time (user and system, the kernel's work in
	// its calls included) the process and the commands it ran spent
	// building: unlike BuildS, it hardly depends on what else the machine
	// runs.
	BuildCPUS float64 `json:"build_cpu_s"`
	// AllReachableS is from the end of the build to the last pod's first
	// echo reply.
	AllReachableS float64 `json:"all_reachable_s"`
	// TeardownS is from the start of teardown until every namespace is
	// unmounted and gone from /run/netns and no process is left in one.
	TeardownS float64 `json:"teardown_s"`
	// KernelCleanupS is from the end of teardown until the kernel has
	// freed the namespaces, which it does in the background after they
	// are deleted: until its net_namespace slab holds as many fewer
	// objects as the lab had namespaces (within 2 %: other work on the
	// machine makes and frees namespaces too); -1 when that was not seen
	// within Config.KernelWait or cannot be read.
	KernelCleanupS float64 `json:"kernel_cleanup_s"`
	// CoordinatorRSSBytes is the peak resident memory of the process that
	// built the lab (VmHWM); CoordinatorFDs its open descriptors once
	// every pod answered.
	CoordinatorRSSBytes int64 `json:"coordinator_rss_bytes"`
	CoordinatorFDs      int   `json:"coordinator_fds"`
	// The machine: its load averages (1, 5, 15 min) before and after,
	// CPUs and kernel.
	LoadBefore [3]float64 `json:"load_before"`
	LoadAfter  [3]float64 `json:"load_after"`
	CPUs       int        `json:"cpus"`
	Kernel     string     `json:"kernel"`
	Time       string     `json:"time"`
}

// NeighTable is the kernel's IPv4 neighbour table as the lab found it:
// its limit (gc_thresh3, for every namespace together; permanent entries
// are exempt), the entries in use before the build, the dynamic entries
// the lab's probe needs (two per pod: pod to gateway, gateway to pod;
// and the hosts' to each other), and how often the table was full during
// the run (its table_fulls counter).
type NeighTable struct {
	Limit      int `json:"gc_thresh3"`
	InUse      int `json:"in_use_before"`
	Needed     int `json:"needed_dynamic"`
	TableFulls int `json:"table_fulls"`
}

// Run builds, probes and tears down one lab; logf gets a line per step.
func Run(ctx context.Context, cfg Config, logf func(string, ...any)) (res Result, err error) {
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	m, err := netmode.Get(cfg.Network)
	if err != nil {
		return res, err
	}
	if err := netmode.Check(m); err != nil {
		return res, err
	}
	if cfg.Limit == 0 {
		cfg.Limit = time.Minute
	}
	table := NeighTable{Limit: readInt("/proc/sys/net/ipv4/neigh/default/gc_thresh3"),
		Needed: 2*cfg.Hosts*cfg.PodsPerHost + cfg.Hosts*cfg.Hosts}
	var fulls0 int
	table.InUse, fulls0 = arpStats()
	static := cfg.Neighbours == "static" ||
		(cfg.Neighbours != "dynamic" && table.Limit > 0 && table.Needed > table.Limit-table.InUse)
	lc := lab.Config{Hosts: cfg.Hosts, ID: cfg.ID, Name: m.Name(), PodBits: PodBits(cfg.PodsPerHost),
		Workers: cfg.Workers, Commands: cfg.Commands, StaticNeighbours: static}
	netmode.ShapeLab(m, &lc)
	l, err := lab.New(lc)
	if err != nil {
		return res, err
	}
	cross, _ := netmode.Allows(m, ground.CrossHost)
	res = Result{Network: m.Name(), Hosts: cfg.Hosts, PodsPerHost: cfg.PodsPerHost, Pods: cfg.Hosts * cfg.PodsPerHost,
		Executor: "netlink", Workers: l.Cfg.Workers, Probe: "cross-host", KernelCleanupS: -1, Neighbours: "dynamic", Table: table,
		LoadBefore: loadavg(), CPUs: runtime.NumCPU(), Kernel: kernel(), Time: time.Now().UTC().Format(time.RFC3339)}
	if !l.Native() {
		res.Executor = "commands"
	}
	if static {
		res.Neighbours = "static"
	}
	if !cross || cfg.Hosts == 1 {
		res.Probe = "host"
	}
	tornDown := false
	defer func() {
		if !tornDown {
			_ = l.Teardown()
		}
	}()

	logf("building %s: %d hosts, %d pods each (lab %s, %s, %d at once, %s neighbours)", m.Name(), cfg.Hosts, cfg.PodsPerHost, l.ID, res.Executor, l.Cfg.Workers, res.Neighbours)
	cpu0 := cpuSeconds()
	t0 := time.Now()
	if err := l.Create(ctx); err != nil {
		return res, err
	}
	t1 := time.Now()
	if err := m.Setup(ctx, l); err != nil {
		return res, fmt.Errorf("setting up: %w", err)
	}
	t2 := time.Now()
	var reqs []netmode.PodReq
	for i := 1; i <= cfg.PodsPerHost; i++ { // round-robin: the hosts fill alike
		for _, h := range l.Hosts {
			reqs = append(reqs, netmode.PodReq{Host: h, Name: "b" + strconv.Itoa(i)})
		}
	}
	pods, err := netmode.AddPods(ctx, m, l, reqs)
	if err != nil {
		return res, err
	}
	t3 := time.Now()
	res.BuildCPUS = cpuSeconds() - cpu0
	res.HostsS, res.SetupS, res.PodsS, res.BuildS = secs(t1.Sub(t0)), secs(t2.Sub(t1)), secs(t3.Sub(t2)), secs(t3.Sub(t0))
	logf("  built in %.2f s (hosts %.2f, setup %.2f, pods %.2f; %.2f s of CPU)", res.BuildS, res.HostsS, res.SetupS, res.PodsS, res.BuildCPUS)

	err = reachAll(ctx, l, pods, res.Probe == "cross-host", cfg.Limit)
	_, fulls := arpStats()
	res.Table.TableFulls = fulls - fulls0
	if err != nil {
		if res.Table.TableFulls > 0 {
			err = fmt.Errorf("%w; the kernel's neighbour table, shared by every namespace, was full %d times (gc_thresh3 %d, %d entries in use before, this lab needs %d): use --neighbours static, or fewer pods", err, res.Table.TableFulls, table.Limit, table.InUse, table.Needed)
		}
		return res, err
	}
	t4 := time.Now()
	res.AllReachableS = secs(t4.Sub(t3))
	res.CoordinatorRSSBytes, res.CoordinatorFDs = peakRSS(), openFDs()
	logf("  all %d pods answered a ping (%s) in %.2f s", len(pods), res.Probe, res.AllReachableS)

	nss := len(l.Namespaces())
	slab0, slabErr := netNamespaces()
	tornDown = true
	terr := l.Teardown()
	t5 := time.Now()
	res.TeardownS = secs(t5.Sub(t4))
	if terr != nil {
		return res, terr
	}
	logf("  torn down in %.2f s", res.TeardownS)
	if slabErr == nil && cfg.KernelWait > 0 {
		if d, ok := waitFreed(ctx, slab0-nss+max(8, nss/50), cfg.KernelWait); ok {
			res.KernelCleanupS = secs(d)
			logf("  the kernel freed the namespaces %.2f s later", res.KernelCleanupS)
		}
	}
	res.LoadAfter = loadavg()
	return res, nil
}

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / 1e9 }

// reachAll pings every pod: those on host i from the first pod of host
// i+1 (cross), or from host i's own namespace.
func reachAll(ctx context.Context, l *lab.Lab, pods []*lab.Pod, cross bool, limit time.Duration) error {
	byHost := map[*lab.Host][]*lab.Pod{}
	for _, p := range pods {
		byHost[p.Host] = append(byHost[p.Host], p)
	}
	type probe struct {
		from    string // a namespace
		targets []netip.Addr
	}
	var probes []probe
	for i, h := range l.Hosts {
		var ts []netip.Addr
		for _, p := range byHost[h] {
			ts = append(ts, p.IP)
		}
		from := h.NetNS
		if cross && len(l.Hosts) > 1 {
			from = byHost[l.Hosts[(i+1)%len(l.Hosts)]][0].NetNS
		}
		probes = append(probes, probe{from, ts})
	}
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ping.Sweep(ctx, p.from, p.targets, 20*time.Millisecond, limit)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// netNamespaces reads how many network namespaces the kernel holds
// (active objects of its net_namespace slab).
func netNamespaces() (int, error) {
	f, err := os.Open("/proc/slabinfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 1 && fs[0] == "net_namespace" {
			return strconv.Atoi(fs[1])
		}
	}
	return 0, errors.New("no net_namespace slab in /proc/slabinfo")
}

// waitFreed waits until the kernel holds no more namespaces than base
// and says how long that took. It looks every 100 ms: reading
// /proc/slabinfo costs the kernel a walk of every slab.
func waitFreed(ctx context.Context, base int, limit time.Duration) (time.Duration, bool) {
	t0 := time.Now()
	for time.Since(t0) < limit && ctx.Err() == nil {
		n, err := netNamespaces()
		if err != nil {
			return 0, false
		}
		if n <= base {
			return time.Since(t0), true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, false
}

// arpStats reads the IPv4 neighbour table's entries and how often it was
// full, from /proc/net/stat/arp_cache: entries is the table's (the same
// on every CPU's line), table_fulls a count per CPU.
func arpStats() (entries, fulls int) {
	b, err := os.ReadFile("/proc/net/stat/arp_cache")
	if err != nil {
		return 0, 0
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return 0, 0
	}
	head := strings.Fields(lines[0])
	for i, line := range lines[1:] {
		for j, v := range strings.Fields(line) {
			n, _ := strconv.ParseInt(v, 16, 64)
			switch {
			case j >= len(head):
			case head[j] == "entries" && i == 0:
				entries = int(n)
			case head[j] == "table_fulls":
				fulls += int(n)
			}
		}
	}
	return entries, fulls
}

func readInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func loadavg() [3]float64 {
	var out [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	fs := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(fs); i++ {
		out[i], _ = strconv.ParseFloat(fs[i], 64)
	}
	return out
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

// peakRSS is this process's peak resident memory (VmHWM), in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fs := strings.Fields(v)
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// cpuSeconds is the CPU time this process and its waited-for children
// (the commands of --commands) have used, user and system.
func cpuSeconds() float64 {
	var sum int64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			sum += ru.Utime.Nano() + ru.Stime.Nano()
		}
	}
	return float64(sum) / 1e9
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// Text is the result as a few lines for a terminal.
func (r Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d pods on %d hosts (%s, %d at once, %s neighbour entries)\n", r.Network, r.Pods, r.Hosts, r.Executor, r.Workers, r.Neighbours)
	fmt.Fprintf(&b, "  build          %6.2f s  (hosts %.2f, setup %.2f, pods %.2f; %.2f s of CPU)\n", r.BuildS, r.HostsS, r.SetupS, r.PodsS, r.BuildCPUS)
	from := "a pod on another host"
	if r.Probe == "host" {
		from = "its host"
	}
	fmt.Fprintf(&b, "  all reachable  %6.2f s  (every pod answered a ping from %s)\n", r.AllReachableS, from)
	fmt.Fprintf(&b, "  teardown       %6.2f s", r.TeardownS)
	if r.KernelCleanupS >= 0 {
		fmt.Fprintf(&b, "  (the kernel freed the namespaces %.2f s later)", r.KernelCleanupS)
	}
	fmt.Fprintf(&b, "\n  coordinator    %.0f MiB peak RSS, %d descriptors open\n", float64(r.CoordinatorRSSBytes)/(1<<20), r.CoordinatorFDs)
	fmt.Fprintf(&b, "  machine        %d CPUs, kernel %s, load %.2f %.2f %.2f before, %.2f %.2f %.2f after\n",
		r.CPUs, r.Kernel, r.LoadBefore[0], r.LoadBefore[1], r.LoadBefore[2], r.LoadAfter[0], r.LoadAfter[1], r.LoadAfter[2])
	return b.String()
}

// Main is `cnperf bench lab`: it checks cfg and the machine, runs the
// bench, prints its text on out (progress on log) and, with jsonPath,
// writes the result there as JSON.
func Main(ctx context.Context, cfg Config, jsonPath string, out, log io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := lab.Preflight(); err != nil {
		return err
	}
	res, err := Run(ctx, cfg, func(f string, a ...any) { fmt.Fprintf(log, f+"\n", a...) })
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted; the lab was torn down")
		}
		return err
	}
	fmt.Fprint(out, res.Text())
	if jsonPath != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := cli.WriteBytes("--out", jsonPath, append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}
