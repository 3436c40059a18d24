package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/backend/kubernetes"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/tuning"
	"github.com/cnperf/cnperf/internal/workload"
)

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// placer is what buildCases asks of a backend.
type placer interface {
	Allows(network string, p backend.Placement) (bool, string)
	Placements(network string) ([]backend.Placement, error)
}

// labPlacer answers for the lab's network modes.
type labPlacer struct{}

func (labPlacer) Allows(n string, p backend.Placement) (bool, string) {
	m, err := netmode.Get(n)
	if err != nil {
		return false, err.Error()
	}
	return netmode.Allows(m, p)
}

func (labPlacer) Placements(n string) ([]backend.Placement, error) {
	m, err := netmode.Get(n)
	if err != nil {
		return nil, err
	}
	return m.Placements(), nil
}

// buildCases turns --networks and --placement into cases; baseline rows are
// added for every placement so that each figure has its ratio.
func buildCases(networks, placements []string, noBaseline bool) ([]runner.Case, error) {
	return buildCasesOn(labPlacer{}, networks, placements, noBaseline)
}

// buildCasesOn is buildCases for the networks and placements of a backend.
func buildCasesOn(be placer, networks, placements []string, noBaseline bool) ([]runner.Case, error) {
	if len(networks) == 0 {
		networks = suite.DefaultNetworks
	}
	var pls []netmode.Placement
	for _, s := range placements {
		p, err := netmode.ParsePlacement(s)
		if err != nil {
			return nil, err
		}
		pls = append(pls, p)
	}
	var cases []runner.Case
	seen := map[runner.Case]bool{}
	add := func(c runner.Case) {
		if !seen[c] {
			seen[c] = true
			cases = append(cases, c)
		}
	}
	explicit := len(pls) > 0
	for _, n := range networks {
		natural, err := be.Placements(n)
		if err != nil {
			return nil, err
		}
		want := pls
		if !explicit {
			want = natural[:1]
			if nb, ok := be.(interface {
				Natural(string) []backend.Placement
			}); ok {
				want = nb.Natural(n)
			}
		}
		for _, p := range want {
			if ok, why := be.Allows(n, p); !ok {
				if explicit && len(networks) > 1 && len(pls) > 1 {
					continue // several placements asked: run the ones it can
				}
				return nil, fmt.Errorf("%s cannot run %s: %s", n, p, why)
			}
			add(runner.Case{Network: n, Placement: p})
		}
	}
	if !noBaseline {
		var withBase []runner.Case
		bseen := map[netmode.Placement]bool{}
		for _, c := range cases {
			if c.Network == result.BaselineNetwork {
				bseen[c.Placement] = true
			}
		}
		for _, c := range cases {
			if !bseen[c.Placement] && c.Placement != netmode.SamePod {
				bseen[c.Placement] = true
				withBase = append(withBase, runner.Case{Network: result.BaselineNetwork, Placement: c.Placement})
			}
			withBase = append(withBase, c)
		}
		cases = withBase
	}
	return cases, nil
}

// runSetup is what `cnperf run`'s flags ask for: the plan, checked, and
// the flags used after it is made.
type runSetup struct {
	plan       runner.Plan
	backend    runner.Placer // the backends --backend names, to check networks against
	networks   string        // --networks as given
	out        string
	outputs    report.Outputs // --html, --csv, --openmetrics, --ndjson
	cpuLatency string
	quiet      bool
	force      bool // --force: --out may replace a file that is not cnperf's
}

// parseRun turns `cnperf run`'s arguments into a checked plan. It builds
// and writes nothing.
func parseRun(args []string) (*runSetup, error) {
	fs := newFlags("run")
	backendName := fs.String("backend", "lab", "where the pods run: lab (network namespaces cnperf builds), docker (containers on the Docker engine at DOCKER_HOST or the current Docker context, as the docker CLI finds it), docker-lab (a Docker engine per lab host, started by cnperf, a swarm overlay between them), kubernetes (pods on the cluster --kubeconfig names); several side by side: lab,docker-lab")
	var kube kubernetes.Options
	kube.RegisterFlags(fs)
	suiteName := fs.String("suite", "default", "preset to run (see cnperf suites); --networks/--workloads/--placement override it")
	quick := fs.Bool("quick", false, "the suite's short version (fewer rounds, sizes, pods or networks, shorter cells): under 2 minutes on a 2-CPU machine")
	networks := fs.String("networks", "", "comma-separated networks (default: the suite's; see cnperf networks)")
	workloads := fs.String("workloads", "", "comma-separated workloads (default: the suite's; see cnperf workloads)")
	placement := fs.String("placement", "", "same-pod, same-host or cross-host, comma-separated (default: each network's natural one); --backend kubernetes also cross-zone (cross-host, nodes of two topology.kubernetes.io/zone values)")
	duration := fs.Duration("duration", 0, "how long each measurement runs (default: the suite's, 5s)")
	msgSize := fs.String("message-size", "", "message size in bytes (default: 16 for rr, 256 for tcp_stream, 1024 for udp_stream); a list (64,256,1024,4096,16384,65536) sweeps the stream and rr workloads, one result per size")
	parallel := fs.Int("parallel", 0, "stream and rr workloads: run N flows at once between each pair: aggregate, per-flow figures and Jain's fairness")
	neighbours := fs.String("neighbours", "", "noisy neighbour pods beside the measured pair, every cell measured without and with them: busy:N (busy loops), periodic:N:P% (each wants P% of a CPU), stream:N (N other pairs streaming)")
	a2aPods := fs.String("pods", "", "alltoall: pod counts, comma-separated (default 2,4,8,16,32)")
	density := fs.String("density", "", "idle pods on every host, a deployment per count (e.g. 10,50,110,250): tcp_rr, tcp_crr and startup measured beside them, paired with the smallest count")
	spreads := fs.String("spread", "", "alltoall across hosts: how pods sit on two hosts: 1:N-1, balanced (default both)")
	tuningFlag := fs.String("tuning", "", "host tuning applied inside the lab's namespaces: none, study (seed 000's: NOTRACK, RPS/RFS, sysctls for many connections) or one part of it (study-sysctls, study-notrack, study-rps); a list (none,study) measures every pair cell with each, interleaved")
	direction := fs.String("direction", "", "stream direction: up (client sends) or down (server sends)")
	mtu := fs.Int("mtu", 1500, "underlay MTU")
	repeat := fs.Int("repeat", 0, "interleaved rounds: every cell runs once per round, in an order that changes from round to round (default 1)")
	startupPods := fs.Int("startup-pods", 0, "startup: pods created per round (default 10, the paper's mean of 10)")
	out := fs.String("out", "", "results JSON path (default: cnperf-results/run-<time>.json); an existing file is replaced only if it is a cnperf results file")
	force := fs.Bool("force", false, "let --out replace an existing file that is not a cnperf results file, or a symlink")
	var outputs report.Outputs
	fs.StringVar(&outputs.HTML, "html", "", "also write the report as a self-contained HTML page (see cnperf report --html)")
	fs.StringVar(&outputs.CSV, "csv", "", "also write the results as CSV files into this folder (see cnperf report --csv)")
	fs.StringVar(&outputs.OpenMetrics, "openmetrics", "", "also write the summaries as OpenMetrics / Prometheus text into this file (see cnperf report --openmetrics)")
	fs.StringVar(&outputs.NDJSON, "ndjson", "", "also write the summaries as NDJSON for an Elasticsearch/OpenSearch _bulk request into this file (see cnperf report --ndjson)")
	noBaseline := fs.Bool("no-baseline", false, "do not add the baseline rows")
	quiet := fs.Bool("quiet", false, "no progress lines")
	lbs := fs.String("lb", "", "ClusterIP load balancers, comma-separated: iptables, nftables, ipvs, ebpf-socket, ebpf-tc, none (the pod IP directly)")
	svcCounts := fs.String("services", "", "with --lb: numbers of services to program, comma-separated scale steps (default 1)")
	cpuLatency := fs.String("cpu-latency", "auto", "PM QoS CPU wake-up bound held during the run, as tuned's network-latency profile does: µs (0 = shallowest idle), off, or auto (0 where the kernel offers it)")
	pin := fs.String("pin", "", "pin the client and server agents to CPUs, e.g. 0,1 (steadier numbers on a busy machine)")
	modeOpts := map[string]string{}
	fs.Func("mode-opt", "network-mode option key=value, repeatable or comma-separated (e.g. controlplane=off, encrypt=aes-gcm)", func(s string) error {
		for _, kv := range splitList(s) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return fmt.Errorf("mode option %q; use key=value", kv)
			}
			modeOpts[k] = v
		}
		return nil
	})
	extra := map[string]*string{}
	for _, f := range workload.Flags() {
		if f.Bool {
			extra[f.Name] = boolFlag(fs, f.Name, f.Usage)
			continue
		}
		extra[f.Name] = fs.String(f.Name, "", f.Usage)
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, usageErr(err)
	}
	if err := explicitValues(fs); err != nil {
		return nil, usageErr(err)
	}
	st, err := suite.Get(*suiteName)
	if err != nil {
		return nil, err
	}
	if *quick {
		st = st.Quick()
	}
	if err := runner.CheckBackend(*backendName); err != nil {
		return nil, err
	}
	if err := kubeFlags(fs, *backendName); err != nil {
		return nil, err
	}
	placements := splitList(*placement)
	placements, kube.Placement.CrossZone = kubernetes.TakeCrossZone(placements)
	if kube.Placement.CrossZone && *backendName != kubernetes.Name {
		return nil, errors.New("--placement cross-zone chooses nodes of two zones of a cluster; use it with --backend kubernetes alone")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	plan0 := runner.Plan{BackendName: *backendName, Agent: []string{self, "agent"}, Kubernetes: kube}
	be, _ := plan0.NewBackend()
	var pl placer = labPlacer{}
	if *backendName != "lab" {
		pl = be
	}
	cases := st.Cases
	if *networks != "" || *placement != "" || *backendName != "lab" {
		nets := splitList(*networks)
		if len(nets) == 0 && *backendName == kubernetes.Name {
			nets = []string{kubernetes.DefaultNetwork}
		}
		if len(nets) == 0 && *backendName != "lab" {
			return nil, fmt.Errorf("--backend %s: name the networks to run, e.g. --networks bridge,host,nat", *backendName)
		}
		if cases, err = buildCasesOn(pl, nets, placements, *noBaseline); err != nil {
			return nil, err
		}
	}
	wls := st.Workloads
	if *workloads != "" {
		wls = splitList(*workloads)
	}
	params := st.Params
	if *duration != 0 {
		params.Duration = *duration
	}
	sizes, err := positiveInts("message-size", *msgSize, "64,1024,65536")
	if err != nil {
		return nil, err
	}
	msgSizes := st.MessageSizes
	switch {
	case len(sizes) == 1:
		params.MessageSize, msgSizes = sizes[0], nil
	case len(sizes) > 1:
		msgSizes = sizes
	}
	densities, err := positiveInts("density", *density, "10,50,110,250")
	if err != nil {
		return nil, err
	}
	pods, err := positiveInts("pods", *a2aPods, "2,4,8")
	if err != nil {
		return nil, err
	}
	if *direction != "" {
		params.Direction = *direction
		if err := directionApplies(wls); err != nil {
			return nil, err
		}
	}
	merged := map[string]string{}
	for k, v := range st.Params.Extra {
		merged[k] = v
	}
	for name, v := range extra {
		if *v != "" {
			merged[name] = *v
		}
	}
	params.Extra = merged
	if len(merged) == 0 {
		params.Extra = nil
	}
	plan := runner.Plan{
		Cases:        cases,
		Workloads:    wls,
		Params:       params,
		Lab:          lab.Config{MTU: *mtu, Underlay: netip.MustParsePrefix("10.100.0.0/24"), ModeOptions: modeOpts},
		Repeat:       cmp.Or(*repeat, st.Rounds),
		StartupPods:  *startupPods,
		BackendName:  *backendName,
		Kubernetes:   kube,
		Agent:        plan0.Agent,
		MessageSizes: msgSizes,
		Parallel:     cmp.Or(*parallel, st.Parallel),
		Neighbours:   cmp.Or(*neighbours, st.Neighbours),
		AllToAllPods: pods,
		Spreads:      splitList(*spreads),
		Densities:    densities,
	}
	if len(plan.Densities) == 0 {
		plan.Densities = st.Densities
	}
	if len(plan.AllToAllPods) == 0 {
		plan.AllToAllPods = st.AllToAllPods
	}
	if plan.StartupPods == 0 && *workloads == "" {
		plan.StartupPods = st.StartupPods
	}
	if len(plan.Spreads) == 0 {
		plan.Spreads = st.Spreads
	}
	if *workloads == "" {
		plan.Tunings = st.Tunings // the suite's, for its own workloads
	}
	if *tuningFlag != "" {
		if plan.Tunings, err = tuning.ParseList(*tuningFlag); err != nil {
			return nil, err
		}
	}
	if err := clusterLB(splitList(*lbs), *backendName); err != nil {
		return nil, err
	}
	if err := applyServices(&plan, st, *lbs, *svcCounts, *networks != "" || *backendName == kubernetes.Name); err != nil {
		return nil, err
	}
	if err := clusterLB(plan.LBs, *backendName); err != nil {
		return nil, err
	}
	for _, f := range splitList(*pin) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("--pin %q: want two CPU numbers, e.g. --pin 0,1", *pin)
		}
		plan.Pin = append(plan.Pin, n)
	}
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	// before anything is built: a bad path found after the run loses nothing
	// measured, but costs the run's time
	if err := outputs.Check(); err != nil {
		return nil, usageError{err}
	}
	return &runSetup{plan: plan, backend: be, networks: *networks, out: *out, outputs: outputs, cpuLatency: *cpuLatency, quiet: *quiet, force: *force}, nil
}

func cmdRun(args []string) error {
	setup, err := parseRun(args)
	if err != nil {
		return err
	}
	run, path, err := execute(setup, 0)
	if run != nil {
		listFailed(os.Stderr, run)
	}
	if err != nil {
		return err
	}
	return cellsStatus(run, path)
}

// errTimeLimit ends a run that reached the limit execute was given: what
// was measured is written, the lab torn down.
var errTimeLimit = errors.New("time limit reached")

// execute runs a checked setup, as `cnperf run` does: it builds, measures,
// writes the run file after every cell, prints the table and the --html
// and --csv outputs, and tears down. With limit above 0 the run stops
// after that long (errTimeLimit, the run file written with what was
// measured). It returns the run and its file.
func execute(setup *runSetup, limit time.Duration) (*result.Run, string, error) {
	plan := setup.plan
	if !setup.quiet {
		plan.Log = os.Stderr
	}
	// a run on a cluster alone builds nothing on this machine
	if plan.BackendName != kubernetes.Name {
		if err := preflightFor(plan.BackendName); err != nil {
			return nil, "", err
		}
	}
	if setup.networks == "" && plan.BackendName == kubernetes.Name {
		// the cluster is checked before anything is made, whichever networks
		var nets []string
		for _, c := range plan.Cases {
			if !slices.Contains(nets, c.Network) {
				nets = append(nets, c.Network)
			}
		}
		setup.networks = strings.Join(nets, ",")
	}
	if setup.networks != "" {
		check := func(n string) error {
			m, _ := netmode.Get(n)
			return netmode.Check(m)
		}
		if setup.backend != nil && setup.plan.BackendName != "lab" {
			check = setup.backend.Check
		}
		// In a comparison, a network this machine cannot build is skipped
		// with the reason shown (the runner records it); when none of the
		// networks the user named can be built, that is an error.
		var firstErr error
		buildable := 0
		for _, n := range splitList(setup.networks) {
			if err := check(n); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			buildable++
		}
		if buildable == 0 {
			return nil, "", firstErr
		}
	}
	// before the results folder is made: a bad value leaves nothing
	release, held, err := holdCPULatency(setup.cpuLatency, plan.Log)
	if err != nil {
		return nil, "", err
	}
	defer release()
	path, err := resultsPath(setup.out)
	if err != nil {
		return nil, "", err
	}
	if err := checkReplace(path, setup.force); err != nil {
		return nil, "", err
	}
	lock, err := lockResults(path)
	if err != nil {
		return nil, "", err
	}
	defer lock.release()
	plan.Out = path

	ctx, stop := interruptible()
	defer stop()
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	run := &result.Run{
		Schema: result.Schema, Version: version, StartedAt: time.Now().UTC(),
		Command: os.Args, Environment: result.CaptureHost(),
	}
	run.Environment.CPULatencyUs = held
	run.Environment.Tools = toolVersions()
	execErr := runner.Execute(ctx, plan, run)
	run.FinishedAt = time.Now().UTC()
	if err := saveAndShow(setup, run, path, execErr); err != nil {
		return run, path, err
	}
	switch {
	case limit > 0 && ctx.Err() == context.DeadlineExceeded:
		return run, path, errTimeLimit
	case errors.Is(execErr, context.Canceled) || errors.Is(execErr, context.DeadlineExceeded):
		return run, path, fmt.Errorf("interrupted; the lab was torn down%s", partial(len(run.Results), path))
	}
	return run, path, execErr
}

// resultsPath checks where the results go before anything is built: the
// default folder is created; a folder the user named must exist, and the
// file must be one that can be replaced.
func resultsPath(out string) (string, error) {
	path := out
	if path == "" {
		path = filepath.Join("cnperf-results", "run-"+time.Now().Format("20060102-150405")+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("results folder: %w", err)
		}
		path = unusedPath(path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("--out %s: folder %s does not exist; create it first or choose another path", out, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("--out %s: not a regular file; choose a file path such as results.json", out)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && (real == "/proc" || strings.HasPrefix(real, "/proc/") || real == "/sys" || strings.HasPrefix(real, "/sys/")) {
		return "", fmt.Errorf("--out %s: cannot write results under %s; choose a file in an ordinary folder", out, real)
	}
	f, err := os.CreateTemp(dir, ".cnperf-probe-*")
	if err != nil {
		return "", fmt.Errorf("--out %s: cannot write in %s (%v); choose a writable folder", out, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return path, nil
}

// explicitValues refuses what a user typed that would silently mean
// something else: a list flag given with no item in it (--networks ,), a
// zero that would mean "the default" (--duration 0, --repeat 0).
func explicitValues(fs *flag.FlagSet) error {
	lists := map[string]string{"networks": "host,vxlan", "workloads": "tcp_rr,tcp_stream", "placement": "cross-host",
		"lb": "iptables,ebpf-socket", "services": "1,10000", "pin": "0,1", "pods": "2,4,8", "spread": "balanced", "neighbours": "busy:5", "mode-opt": "key=value", "tuning": "none,study"}
	zeros := map[string]string{"duration": "5s", "message-size": "1024", "repeat": "3", "startup-pods": "10", "parallel": "4", "mtu": "1500"}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := f.Value.String()
		if eg, ok := lists[f.Name]; ok && f.Name != "mode-opt" && len(splitList(v)) == 0 {
			err = fmt.Errorf("--%s %q names nothing; give at least one, e.g. --%s %s, or leave it out for the default", f.Name, v, f.Name, eg)
		}
		if _, isList := lists[f.Name]; !isList && f.Name != "mode-opt" && strings.TrimSpace(v) == "" {
			err = fmt.Errorf("--%s %q is empty; give a value (see `cnperf run -h`) or leave it out for the default", f.Name, v)
		}
		if eg, ok := zeros[f.Name]; ok && (v == "0" || v == "0s") {
			err = fmt.Errorf("--%s 0: use a positive value, e.g. --%s %s, or leave it out for the default", f.Name, f.Name, eg)
		}
	})
	return err
}

// positiveInts parses a comma-separated list of positive numbers given
// to --name ("" is none).
func positiveInts(name, s, eg string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--%s %q: %s must be positive numbers, e.g. --%s %s", name, f, strings.ReplaceAll(name, "-", " "), name, eg)
		}
		out = append(out, n)
	}
	return out, nil
}

// directionApplies refuses --direction when no selected workload has one
// (it would be silently ignored), naming those that do.
func directionApplies(wls []string) error {
	for _, n := range wls {
		if w, err := workload.Get(n); err == nil && workload.IsBulk(w) {
			return nil
		}
	}
	var takers []string
	for _, n := range workload.Names() {
		if w, _ := workload.Get(n); workload.IsBulk(w) {
			takers = append(takers, n)
		}
	}
	return fmt.Errorf("--direction applies to %s; select one of them or drop --direction", strings.Join(takers, ", "))
}

func partial(n int, path string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d results so far are in %s", n, path)
}

// preflight checks what every run needs, before anything is built.
func preflight() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root to create network namespaces; run it as root (sudo cnperf run ...)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("needs the ip command; install it (apt-get install iproute2)")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return errors.New("this kernel has no network namespaces (CONFIG_NET_NS); cnperf's lab needs them")
	}
	return nil
}

func toolVersions() map[string]string {
	m := map[string]string{}
	if out, err := exec.Command("ip", "-V").Output(); err == nil {
		m["iproute2"] = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("iptables", "-V").Output(); err == nil {
		m["iptables"] = strings.TrimSpace(string(out))
	}
	return m
}

// kubeFlags refuses the kubernetes backend's flags on a run without it,
// and asks for --image on one with it, before anything is contacted.
func kubeFlags(fs *flag.FlagSet, backendName string) error {
	on := slices.Contains(strings.Split(backendName, ","), kubernetes.Name)
	var err error
	fs.Visit(func(f *flag.Flag) {
		if !on && err == nil && slices.Contains(kubernetes.FlagNames(), f.Name) {
			err = fmt.Errorf("--%s applies to --backend kubernetes; drop it or add --backend kubernetes", f.Name)
		}
	})
	if err != nil || !on {
		return err
	}
	return (kubernetes.Options{Image: fs.Lookup("image").Value.String(), Prefix: fs.Lookup("namespace-prefix").Value.String(),
		PullSecret: fs.Lookup("image-pull-secret").Value.String()}).Validate()
}

// clusterLB checks --lb against the backends: a cluster's own proxy is the
// kubernetes backend's; there, cnperf's replicas cannot be programmed.
func clusterLB(lbs []string, backendName string) error {
	bs := strings.Split(backendName, ",")
	kube := slices.Contains(bs, kubernetes.Name)
	for _, lb := range lbs {
		switch {
		case lb == svc.ClusterProxy && !kube:
			return fmt.Errorf("--lb %s is a Kubernetes cluster's own service proxy; use it with --backend kubernetes", lb)
		case kube && len(bs) == 1 && lb != svc.ClusterProxy && lb != svc.None:
			return fmt.Errorf("--lb %s is one of cnperf's replicas; on --backend kubernetes use --lb %s (the cluster's proxy) or %s (the pod IP)", lb, svc.ClusterProxy, svc.None)
		}
	}
	return nil
}
