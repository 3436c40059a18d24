// Package neighbours is seed 001's interference experiment (INFOCOM 2018,
// Figure 8: user-space overlays suffer most when the host's CPUs are
// contended): neighbour pods beside the measured pair, on the same
// emulated hosts, each a real process in its own pod namespace and its
// own CPU cgroup (cnperf-<lab>-nbN, removed at teardown):
//
//	busy:N         N pods in a busy loop (the CPU-bound case)
//	periodic:N:P%  N pods that wake every 10 ms wanting P % of a CPU
//	stream:N       N other pairs streaming TCP across the same hosts
//
// Every cell is measured without and with its neighbours in the same
// round, the order alternating from round to round; the result with
// neighbours carries the quiet figure of its round, the drop, and (once
// every round ran) the paired ratio to the quiet cell with its interval.
package neighbours

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/spin"
)

func init() {
	experiment.Register(Neighbours{}, 85)
	cleanup.RegisterHostState("neighbours cgroups", cleanup.Func(CleanCgroups))
}

// Max bounds the neighbours (pods of busy/periodic, pairs of stream): the
// lab runs every one as a process on this machine.
const Max = 16

// Warmup is how long the neighbours run before the measurement starts.
const Warmup = 300 * time.Millisecond

// StepQuiet labels the results without neighbours.
const StepQuiet = "neighbours=none"

// Spec is a parsed --neighbours.
type Spec struct {
	Kind  string  // busy, periodic, stream
	N     int     // pods (busy, periodic) or pairs (stream)
	Duty  float64 // periodic: share of a CPU each wants (0-1]
	Text  string  // as given
	Ports int     // stream: the first port of the neighbours' streams
}

// Parse reads "busy:5", "periodic:5:10%", "stream:2".
func Parse(s string) (Spec, error) {
	f := strings.Split(s, ":")
	bad := fmt.Errorf("--neighbours %q; use busy:N, periodic:N:P%% or stream:N, e.g. busy:5, periodic:5:10%%, stream:2", s)
	if len(f) < 2 {
		return Spec{}, bad
	}
	sp := Spec{Kind: f[0], Text: s, Duty: 1}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 1 {
		return Spec{}, bad
	}
	if n > Max {
		return Spec{}, fmt.Errorf("--neighbours %s: %d neighbours is more than the lab runs beside a pair (at most %d); use %s:%d or fewer", s, n, Max, f[0], Max)
	}
	sp.N = n
	switch {
	case f[0] == "busy" && len(f) == 2, f[0] == "stream" && len(f) == 2:
	case f[0] == "periodic" && len(f) == 3:
		d, err := spin.Duty(f[2])
		if err != nil || !strings.HasSuffix(f[2], "%") {
			return Spec{}, fmt.Errorf("--neighbours %s: the CPU share %q must be a percentage above 0 and at most 100%%, e.g. periodic:5:10%%", s, f[2])
		}
		sp.Duty = d
	default:
		return Spec{}, bad
	}
	return sp, nil
}

// Step labels the results with neighbours.
func (s Spec) Step() string { return "neighbours=" + s.Text }

// Neighbours is the experiment.
type Neighbours struct{}

// Name implements experiment.Experiment.
func (Neighbours) Name() string { return "neighbours" }

// Summary implements experiment.Experiment.
func (Neighbours) Summary() string {
	return "noisy neighbours (--neighbours busy:N, periodic:N:P%, stream:N): every cell without and with them, the drop with its interval"
}

// Option is --neighbours.
var Option = option.Spec{Name: "neighbours", Kind: option.String, Example: "busy:5",
	Help:      "noisy neighbour pods beside the measured pair, every cell measured without and with them: busy:N (busy loops), periodic:N:P% (each wants P% of a CPU), stream:N (N other pairs streaming)",
	AppliesTo: "the pair workloads (e.g. tcp_rr, tcp_stream; not rate steps, services or alltoall)"}

// Options implements experiment.Optioner.
// It reads --parallel and a --message-size list too, to refuse them: not
// combined yet.
func (Neighbours) Options() []option.Spec { return []option.Spec{Option, pairs.Flows, pairs.Sizes} }

// SelectedBy implements experiment.Selector.
func (Neighbours) SelectedBy() string { return "--neighbours" }

// Claim takes the single-step agent workloads when neighbours are asked.
func (Neighbours) Claim(p *experiment.Plan) []string {
	if p.Option(Option.Name) == "" {
		return nil
	}
	var out []string
	for _, name := range p.Workloads {
		w, err := workload.Get(name)
		if err != nil || name == spin.Name {
			continue
		}
		if _, stepped := w.(workload.Stepper); !stepped {
			out = append(out, name)
		}
	}
	return out
}

// Validate implements experiment.Experiment.
func (Neighbours) Validate(p *experiment.Plan, workloads []string) error {
	if p.Int(pairs.Flows.Name) > 1 {
		return fmt.Errorf("--parallel cannot be combined with --neighbours yet; drop one of them (run them separately)")
	}
	if len(p.List(pairs.Sizes.Name)) > 1 {
		return fmt.Errorf("a --message-size list cannot be combined with --neighbours yet; give one size (or run them separately)")
	}
	if _, err := Parse(p.Option(Option.Name)); err != nil {
		return err
	}
	if _, err := hierarchies(); err != nil {
		return err
	}
	return pairs.Pairs{}.Validate(p, workloads)
}

// neighbourPods adds the neighbours to topo, alternating between the
// measured pair's hosts; it returns the pod names (stream: client and
// server of each pair, in turn).
func neighbourPods(topo *backend.Topology, sp Spec) []string {
	hosts := []int{1}
	if topo.Hosts >= 2 {
		hosts = append(hosts, 2)
	}
	var names []string
	add := func(name string, host int) {
		topo.Pods = append(topo.Pods, backend.PodSpec{Name: name, Host: host, CPU: -1})
		names = append(names, name)
	}
	for i := 1; i <= sp.N; i++ {
		if sp.Kind == "stream" {
			add(fmt.Sprintf("nb%dc", i), hosts[0])
			add(fmt.Sprintf("nb%ds", i), hosts[len(hosts)-1])
			continue
		}
		add(fmt.Sprintf("nb%d", i), hosts[(i-1)%len(hosts)])
	}
	return names
}

// unitState is what a unit's cells share: the neighbours' cgroups.
type unitState struct {
	sp    Spec
	pods  []string
	cgs   []*cgroup
	round int // stream neighbours' port rotation
}

// Units implements experiment.Experiment: the pairs' topology plus the
// neighbours; each placement × workload a cell measuring both ways.
func (Neighbours) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	sp, err := Parse(p.Option(Option.Name))
	if err != nil {
		return nil, err
	}
	hs, err := hierarchies()
	if err != nil {
		return nil, err
	}
	order, byNet := pairs.ByNetwork(p)
	ccpu, scpu := p.CPUs()
	var units []sched.Unit
	port := 5201
	for _, net := range order {
		topo, prs := pairs.Topology(net, byNet[net], ccpu, scpu)
		st := &unitState{sp: sp, pods: neighbourPods(&topo, sp)}
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		u.Prepare = func(ctx context.Context, d backend.Deployment) (func() error, error) {
			return st.prepare(d, hs)
		}
		for _, pr := range prs {
			for _, name := range workloads {
				w, _ := workload.Get(name)
				base := p.Params
				w.Defaults(&base)
				u.Cells = append(u.Cells, st.cell(w, base, pr, p.PinParam(), &port))
			}
		}
		units = append(units, u)
	}
	return units, nil
}

// prepare puts every neighbour's agent in a CPU cgroup of its own.
func (st *unitState) prepare(d backend.Deployment, hs []hierarchy) (func() error, error) {
	cleanup := func() error {
		var errs []error
		for _, cg := range st.cgs {
			if err := cg.remove(); err != nil {
				errs = append(errs, err)
			}
		}
		st.cgs = nil
		if len(errs) > 0 {
			return fmt.Errorf("neighbours' cgroups: %v", errs)
		}
		return nil
	}
	for _, name := range st.pods {
		pod := d.Pod(name)
		if pod == nil || pod.PID == 0 {
			return cleanup, backend.Skip(fmt.Sprintf("this backend does not say which process runs neighbour %s; noisy neighbours need the local lab", name))
		}
		cg, err := newCgroup(hs, CgroupName(d.ID(), name))
		if err != nil {
			return cleanup, err
		}
		st.cgs = append(st.cgs, cg)
		if err := cg.add(pod.PID); err != nil {
			return cleanup, err
		}
	}
	return cleanup, nil
}

func (st *unitState) cpu() (time.Duration, bool) {
	var sum time.Duration
	for _, cg := range st.cgs {
		v, ok := cg.cpu()
		if !ok {
			return 0, false
		}
		sum += v
	}
	return sum, true
}

// start sets the neighbours going for at most d; stop ends them.
func (st *unitState) start(ctx context.Context, dep backend.Deployment, d time.Duration) (stop func(), err error) {
	nctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var servers []interface {
		Stop() (workload.Report, error)
	}
	stop = func() {
		cancel()
		wg.Wait()
		for _, s := range servers {
			_, _ = s.Stop()
		}
	}
	long := d + time.Minute
	if st.sp.Kind != "stream" {
		params := workload.Params{Duration: long, MessageSize: 1, Extra: map[string]string{spin.DutyKey: strconv.FormatFloat(st.sp.Duty*100, 'f', -1, 64) + "%"}}
		for _, name := range st.pods {
			pod := dep.Pod(name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = pod.Agent.Run(nctx, spin.Name, params, netip.MustParseAddrPort("127.0.0.1:9"))
			}()
		}
		return stop, nil
	}
	sw, err := workload.Get("tcp_stream")
	if err != nil {
		return stop, err
	}
	st.round++
	for i := 0; i+1 < len(st.pods); i += 2 {
		c, s := dep.Pod(st.pods[i]), dep.Pod(st.pods[i+1])
		params := workload.Params{Duration: long, Port: 61000 + (st.round*Max+i/2)%4000}
		sw.Defaults(&params)
		srv, err := s.Agent.Serve(ctx, sw.Name(), params)
		if err != nil {
			stop()
			return nil, fmt.Errorf("neighbour stream server on %s: %w", s.Name, err)
		}
		servers = append(servers, srv)
		addr, err := dep.Dial(ctx, c.Name, s.Name, sw.Proto(), params.Port)
		if err != nil {
			stop()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Agent.Run(nctx, sw.Name(), params, addr)
		}()
	}
	return stop, nil
}

func (st *unitState) cell(w workload.Workload, base workload.Params, pr pairs.Pair, pin string, port *int) sched.Cell {
	name := string(pr.Placement) + " " + w.Name() + " " + st.sp.Step()
	planned := pairs.Planned(w, base)
	if planned > 0 {
		planned = 2*planned + Warmup // without and with the neighbours
	}
	return sched.Cell{Name: name, Planned: planned, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
		one := func() result.Result {
			params := base
			params.Port = *port
			if *port++; *port > 60000 {
				*port = 5201
			}
			res := measure.Measure(ctx, d, measure.Spec{Workload: w, Params: params, Client: pr.Client, Servers: []string{pr.Server}})
			res.Placement, res.Round = string(pr.Placement), round
			if pin != "" {
				res.Params["pinned_cpus"] = pin
			}
			return res
		}
		quiet := func() result.Result {
			r := one()
			r.Step = StepQuiet
			return r
		}
		noisy := func() (result.Result, error) {
			stop, err := st.start(ctx, d, base.Duration)
			if err != nil {
				return result.Result{}, err
			}
			select {
			case <-ctx.Done():
			case <-time.After(Warmup):
			}
			c0, ok0 := st.cpu()
			t0 := time.Now()
			r := one()
			c1, ok1 := st.cpu()
			wall := time.Since(t0)
			stop()
			r.Step = st.sp.Step()
			r.Params["neighbours"] = st.sp.Text
			if ok0 && ok1 && r.Error == "" {
				setExtra(&r.Metrics, result.ExtraNeighbourCPU, (c1-c0).Seconds()/wall.Seconds())
			}
			return r, nil
		}
		var q, n result.Result
		var err error
		if round%2 == 1 {
			q = quiet()
			if ctx.Err() == nil {
				n, err = noisy()
			}
		} else {
			n, err = noisy()
			if ctx.Err() == nil && err == nil {
				q = quiet()
			}
		}
		if err := ctx.Err(); err != nil {
			return err // cut short: neither half is recorded
		}
		if err != nil {
			return err
		}
		if key := mainKey(w); key != "" && q.Error == "" && n.Error == "" {
			qv, ok1 := q.Metrics.Value(key)
			nv, ok2 := n.Metrics.Value(key)
			if ok1 && ok2 && qv > 0 {
				setExtra(&n.Metrics, result.ExtraQuiet, qv)
				setExtra(&n.Metrics, result.ExtraDropPct, drop(w, qv, nv))
			}
		}
		rec.Result(q)
		rec.Result(n)
		return nil
	}}
}

// drop is how much worse nv is than qv, in %: for a higher-is-better
// figure the share lost, for a lower-is-better one the share it grew.
func drop(w workload.Workload, qv, nv float64) float64 {
	if w.Figures()[0].Better == result.LowerBetter {
		return (nv/qv - 1) * 100
	}
	return (1 - nv/qv) * 100
}

func mainKey(w workload.Workload) string {
	if fs := w.Figures(); len(fs) > 0 {
		return fs[0].Key
	}
	return ""
}

func setExtra(m *result.Metrics, k string, v float64) {
	if m.Extra == nil {
		m.Extra = map[string]float64{}
	}
	m.Extra[k] = v
}

// Finish implements experiment.Finisher: every result with neighbours gets
// the ratio of its cell's main figure to the quiet cell's, paired by
// round, with its interval and verdict (VsQuiet).
func (Neighbours) Finish(run *result.Run) {
	pairs.PairByRound(run, func(r result.Result) (result.CellKey, bool, bool) {
		if !strings.HasPrefix(r.Step, "neighbours=") {
			return result.CellKey{}, false, false
		}
		qk := r.Key()
		qk.Step = StepQuiet
		return qk, r.Step == StepQuiet, true
	}, func(r *result.Result, c result.Comparison) { r.VsQuiet = &c })
}
