// Package alltoall is seed 001's scalability experiment (INFOCOM 2018:
// all-to-all exchange among many containers depends on how they are
// placed): N pods exchange messages all-to-all in rounds, as osu_alltoall
// does (workload alltoall), for N in --pods (default 2,4,8,16,32); on one
// host (same-host), and on two hosts (cross-host) with the placements of
// --spread: 1:N-1 (one pod on the first host, the rest on the second) and
// balanced (half on each). Selected like a workload: --workloads alltoall.
// One deployment per network holds every pod any cell needs; each
// N × placement is a cell of the interleaved rounds, its result the time
// per round (percentiles over every pod's rounds) and the aggregate
// throughput, checked against the exact count of messages expected.
//
// In the local lab the pods run no agents: this process holds every pod's
// sockets, made inside the pod's namespace (workload alltoall's Exchange),
// so N reaches 1,000 where the open-file hard limit holds N·(N-1) sockets
// (MaxPods); elsewhere each pod is an agent (MaxAgentPods). Every pod
// still exchanges with every other in every round: nothing is sampled.
package alltoall

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"net/netip"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
)

func init() { experiment.Register(AllToAll{}, 30) }

// The placements of N pods on two hosts.
const (
	OneToRest = "1:N-1"
	Balanced  = "balanced"
	oneHost   = "one-host"
)

// Defaults.
var (
	DefaultPods    = []int{2, 4, 8, 16, 32}
	DefaultSpreads = []string{OneToRest, Balanced}
)

// The pods listen on ports above the lab's ephemeral range (1024-65000,
// lab.Sysctls): with 32 pods a namespace holds hundreds of
// outgoing connections, any of which may hold a port in that range and
// make a listener's bind fail.
const (
	FirstPort = 65001
	LastPort  = 65535
)

// MaxPods bounds N in the local lab, where one process holds every pod's
// sockets (workload alltoall's Exchange): a thousand pods, as the studies'
// scale asks. Where a pod is an agent process (Docker, Kubernetes),
// MaxAgentPods bounds it: 64 agents of about 6 MB each of their own.
const (
	MaxPods      = 1000
	MaxAgentPods = 64
)

// maxPodsOf is N's bound on p's backend.
func maxPodsOf(p *experiment.Plan) int {
	if inProcess(p) {
		return MaxPods
	}
	return MaxAgentPods
}

// inProcess says whether p's backend gives local namespaces, where the
// exchange runs in this process instead of in an agent per pod.
func inProcess(p *experiment.Plan) bool {
	return p.Backend == nil || backend.Has(p.Backend, backend.LocalLabs)
}

// AllToAll is the experiment.
type AllToAll struct{}

// Name implements experiment.Experiment.
func (AllToAll) Name() string { return a2a.Name }

// Summary implements experiment.Experiment.
func (AllToAll) Summary() string {
	return "all-to-all exchange among N pods in rounds (osu_alltoall): time per round and aggregate throughput, one host and two hosts (1:N-1, balanced)"
}

// Claim takes the alltoall workload.
func (AllToAll) Claim(p *experiment.Plan) []string {
	for _, w := range p.Workloads {
		if w == a2a.Name {
			return []string{a2a.Name}
		}
	}
	return nil
}

// The experiment's options: --pods and --spread.
var (
	Pods = option.Spec{Name: "pods", Kind: option.Ints, Example: "2,4,8",
		Help: "alltoall: pod counts, comma-separated (default 2,4,8,16,32)", AppliesTo: "the alltoall workload"}
	Spread = option.Spec{Name: "spread", Kind: option.List, Example: "balanced",
		Help: "alltoall across hosts: how pods sit on two hosts: 1:N-1, balanced (default both)", AppliesTo: "the alltoall workload"}
)

// Options implements experiment.Optioner.
func (AllToAll) Options() []option.Spec { return []option.Spec{Pods, Spread} }

func podsOf(p *experiment.Plan) []int {
	if ns := p.Ints(Pods.Name); len(ns) > 0 {
		return ns
	}
	return DefaultPods
}

func spreadsOf(p *experiment.Plan) []string {
	if ss := p.List(Spread.Name); len(ss) > 0 {
		return ss
	}
	return DefaultSpreads
}

// Validate implements experiment.Experiment.
func (AllToAll) Validate(p *experiment.Plan, _ []string) error {
	limit := maxPodsOf(p)
	for _, n := range podsOf(p) {
		if n < 2 || n > limit {
			return fmt.Errorf("--pods %d: all-to-all needs 2 to %d pods on this backend; e.g. --pods 2,4,8", n, limit)
		}
		if inProcess(p) {
			if err := a2a.CheckFDLimit(n); err != nil {
				return fmt.Errorf("--pods %d: %w", n, err)
			}
		}
	}
	for _, s := range spreadsOf(p) {
		if s != OneToRest && s != Balanced {
			return fmt.Errorf("--spread %q: unknown placement; use %s or %s", s, OneToRest, Balanced)
		}
	}
	w, _ := workload.Get(a2a.Name)
	params := p.Params
	w.Defaults(&params)
	if err := w.Validate(params); err != nil {
		return fmt.Errorf("%s: %w", a2a.Name, err)
	}
	return nil
}

// Layout is the pods of one cell: their names, in rank order.
func Layout(spread string, n int) []string {
	var h1, h2 int
	switch spread {
	case oneHost:
		h1 = n
	case OneToRest:
		h1, h2 = 1, n-1
	default: // balanced
		h1, h2 = (n+1)/2, n/2
	}
	var out []string
	for i := 1; i <= h1; i++ {
		out = append(out, podName(1, i))
	}
	for i := 1; i <= h2; i++ {
		out = append(out, podName(2, i))
	}
	return out
}

func podName(host, i int) string { return "a" + strconv.Itoa(host) + "-" + strconv.Itoa(i) }

// Step labels a cell's results.
func Step(spread string, n int) string {
	s := "pods=" + strconv.Itoa(n)
	if spread != oneHost {
		s += " spread=" + spread
	}
	return s
}

type cellSpec struct {
	pl     ground.Placement
	spread string
	n      int
}

// Units implements experiment.Experiment: one deployment per network with
// the pods of its largest cell on each host.
func (AllToAll) Units(p *experiment.Plan, _ []string) ([]sched.Unit, error) {
	order, byNet := pairs.ByNetwork(p)
	w, _ := workload.Get(a2a.Name)
	base := p.Params
	w.Defaults(&base)
	var units []sched.Unit
	port := FirstPort
	for _, net := range order {
		var cells []cellSpec
		for _, pl := range byNet[net] {
			spreads := []string{oneHost}
			if pl == ground.CrossHost {
				spreads = spreadsOf(p)
			}
			for _, s := range spreads {
				for _, n := range podsOf(p) {
					cells = append(cells, cellSpec{pl, s, n})
				}
			}
		}
		topo := backend.Topology{Network: net, Hosts: 1}
		have := map[string]bool{}
		for _, c := range cells {
			for _, name := range Layout(c.spread, c.n) {
				if have[name] {
					continue
				}
				have[name] = true
				host := 1
				if strings.HasPrefix(name, "a2-") {
					host, topo.Hosts = 2, 2
				}
				topo.Pods = append(topo.Pods, backend.PodSpec{Name: name, Host: host, CPU: -1, NoAgent: inProcess(p)})
			}
		}
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		if inProcess(p) {
			u.Prepare = prepare(topo)
		}
		for _, c := range cells {
			u.Cells = append(u.Cells, cell(w, base, c, &port))
		}
		units = append(units, u)
	}
	return units, nil
}

func cell(w workload.Workload, base workload.Params, c cellSpec, port *int) sched.Cell {
	step := Step(c.spread, c.n)
	return sched.Cell{Name: string(c.pl) + " " + a2a.Name + " " + step, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
		if *port+c.n-1 > LastPort {
			*port = FirstPort
		}
		params := base
		params.Port = *port
		*port += c.n
		res := Measure(ctx, d, w, params, Layout(c.spread, c.n))
		if err := ctx.Err(); err != nil {
			return err
		}
		res.Placement, res.Step, res.Round = string(c.pl), step, round
		res.Params["spread"] = c.spread
		rec.Result(res)
		return nil
	}}
}

// Measure runs one all-to-all exchange among pods (rank i listens on
// params.Port+i) and returns its result.
func Measure(ctx context.Context, d backend.Deployment, w workload.Workload, params workload.Params, pods []string) result.Result {
	n := len(pods)
	res := result.Result{
		Network: d.Network(), Workload: w.Name(),
		Params: map[string]any{"duration_s": params.Duration.Seconds(), "message_size": params.MessageSize, "pods": n},
	}
	for k, v := range d.Params() {
		res.Params[k] = v
	}
	if local(d, pods) {
		return measureHere(ctx, d, w, params, pods, res)
	}
	jobs := make([]workload.Params, n)
	for i := range pods {
		addrs := make([]string, n)
		for j := range pods {
			if i == j {
				addrs[j] = "-"
				continue
			}
			ap, err := d.Dial(ctx, pods[i], pods[j], w.Proto(), params.Port+j)
			if err != nil {
				res.Error = err.Error()
				return res
			}
			addrs[j] = ap.String()
		}
		jp := params
		jp.Port = params.Port + i
		jp.Extra = map[string]string{a2a.RankKey: strconv.Itoa(i), a2a.PeersKey: strings.Join(addrs, ",")}
		jobs[i] = jp
	}
	dm, hasDaemons := d.(backend.DaemonMeter)
	var dcpu0 float64
	if hasDaemons {
		dcpu0, hasDaemons = dm.DaemonCPUSeconds()
	}
	meter, hasCPU := d.(backend.CPUMeter)
	var cpu0 ground.CPUTimes
	if hasCPU {
		var err error
		cpu0, err = meter.MachineCPU(ctx)
		hasCPU = err == nil
	}
	t0 := time.Now()
	rctx, cancel := context.WithTimeout(ctx, params.Duration+a2a.ConnectTimeout+30*time.Second)
	defer cancel()
	reps := make([]workload.Report, n)
	var first error // the first rank to fail; the others fail after it
	var once sync.Once
	var wg sync.WaitGroup
	for i, name := range pods {
		pod := d.Pod(name)
		if pod == nil {
			res.Error = fmt.Sprintf("no pod %q", name)
			return res
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if reps[i], err = pod.Agent.Run(rctx, w.Name(), jobs[i], netipZero); err != nil {
				once.Do(func() { first = fmt.Errorf("rank %d (%s): %w%s", i, name, err, logOf(d, name)) })
				cancel() // one failed: the others would wait for it forever
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	if first != nil {
		res.Error = first.Error()
		return res
	}
	merged := measure.MergeReports(reps)
	mp := params
	mp.Extra = map[string]string{a2a.ExtraPods: strconv.Itoa(n)}
	mt, h, err := w.Metrics(mp, merged, workload.Report{})
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if hasCPU {
		if cpu1, err := meter.MachineCPU(ctx); err == nil {
			daemons := -1.0
			if hasDaemons {
				if dcpu1, ok := dm.DaemonCPUSeconds(); ok {
					daemons = dcpu1 - dcpu0
				}
			}
			mt.CPU = measure.Cost(cpu1.Sub(cpu0), wall, merged.CPUSeconds, daemons, mt)
		}
	}
	res.Metrics, res.Histogram = mt, h
	return res
}

func logOf(d backend.Deployment, pod string) string {
	if t := d.AgentLog(pod); t != "" {
		return " (agent log: " + strings.ReplaceAll(t, "\n", " | ") + ")"
	}
	return ""
}

// netipZero is an address the agent accepts; every pod's job dials its
// peers from Params.Extra instead.
var netipZero = netip.MustParseAddrPort("127.0.0.1:9")
