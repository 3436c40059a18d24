// Package startup is the network start-up experiment (seed 001): in a
// built network, create pods one at a time on the client's host and time
// each from the create call to the first ICMP echo reply from a peer pod
// (the paper's "from the create command to the first ping reply", mean of
// 10), with the time of each phase, beside pods with no network at all.
// It is selected like a workload: `--workloads startup`.
package startup

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

// Name is the measurement's name, as a workload would have.
const Name = "startup"

// CNIName is the reference measurement: the same network's pods wired by
// the real CNI plugin (Debian's containernetworking-plugins) instead of
// cnperf's replica, sampled alternately with Name in the same cell.
const CNIName = "startup_cni"

// DefaultPods is how many pods a round creates (the paper's mean of 10).
const DefaultPods = 10

func init() {
	experiment.Register(Startup{}, 20)
	workload.RegisterMeasure(workload.Measure{Name: Name, Summary: summary, Figures: Figures})
	workload.RegisterMeasure(workload.Measure{Name: CNIName, Summary: cniSummary, Figures: CNIFigures})
}

const cniSummary = "start-up with the real CNI plugin (bridge, macvlan, ptp from containernetworking-plugins) wiring each pod, timed alternately with startup's replica in the same cell"

// CNIFigures: the real plugin's create-to-first-reply time and its setup
// (the plugin's ADD, its process included), beside startup's.
var CNIFigures = []result.Figure{
	{Key: "startup_ms.mean", Label: "ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: "phases_ms.links", Label: "setup ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
}

const summary = "network start-up time: create a pod, time to the first ping reply from a peer (--startup-pods N per round, default 10), per phase"

// Figures: the mean create-to-first-reply time (with its ratio to the
// baseline) and its p95, in milliseconds.
var Figures = []result.Figure{
	{Key: "startup_ms.mean", Label: "ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime, Ratio: true},
	{Key: "startup_ms.p95", Label: "p95 ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
	{Key: "phases_ms.links", Label: "setup ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
}

// Startup is the experiment.
type Startup struct{}

// Name implements experiment.Experiment.
func (Startup) Name() string { return Name }

// Summary implements experiment.Experiment.
func (Startup) Summary() string {
	return "network start-up time: create a pod, time to the first ping reply from a peer, per phase"
}

// Measures implements experiment.Measurer.
func (Startup) Measures() map[string]string {
	return map[string]string{Name: summary, CNIName: cniSummary}
}

// Claim takes the "startup" and "startup_cni" measurements.
func (Startup) Claim(p *experiment.Plan) []string {
	var out []string
	for _, w := range p.Workloads {
		if w == Name || w == CNIName {
			out = append(out, w)
		}
	}
	return out
}

// Pods is --startup-pods.
var Pods = option.Spec{Name: "startup-pods", Kind: option.Int, Example: "10",
	Help: "startup: pods created per round (default 10, the paper's mean of 10)"}

// Options implements experiment.Optioner.
func (Startup) Options() []option.Spec { return []option.Spec{Pods} }

// Validate implements experiment.Experiment.
func (Startup) Validate(p *experiment.Plan, _ []string) error {
	if n := p.Int(Pods.Name); n < 0 || n > 1000 {
		return fmt.Errorf("--startup-pods %d; use 1 to 1000", n)
	}
	return nil
}

// Units implements experiment.Experiment: one deployment per network, a
// cell per placement.
func (Startup) Units(p *experiment.Plan, kinds []string) ([]sched.Unit, error) {
	n := p.Int(Pods.Name)
	if n == 0 {
		n = DefaultPods
	}
	rounds := max(p.Rounds, 1)
	var order []string
	byNet := map[string][]ground.Placement{}
	for _, c := range p.Cases {
		if _, seen := byNet[c.Network]; !seen {
			order = append(order, c.Network)
		}
		byNet[c.Network] = append(byNet[c.Network], c.Placement)
	}
	var units []sched.Unit
	for _, net := range order {
		topo, prs := pairs.Topology(net, byNet[net], -1, -1)
		// every sample's pod has an address of its own (the real
		// plugin's from the upper half of the host's subnet)
		topo.PodsPerHost = 2*n*rounds + 8
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		for _, pr := range prs {
			u.Cells = append(u.Cells, Cell(net, pr.Placement, pr.Client, pr.Server, n, kinds, ""))
		}
		units = append(units, u)
	}
	return units, nil
}

var tags = map[ground.Placement]string{ground.SamePod: "p", ground.SameHost: "h", ground.CrossHost: "x"}

// Cell samples start-up of pods on client's host, n per round, each kind
// of kinds (Name, CNIName) in turn, its results labelled step.
func Cell(network string, pl ground.Placement, client, server string, n int, kinds []string, step string) sched.Cell {
	name := strings.TrimSpace(string(pl) + " " + strings.Join(kinds, "+") + " " + step)
	return sched.Cell{Name: name, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
		peer := server
		if pl == ground.SamePod {
			peer = ""
		}
		var runs []*sampler
		for _, k := range kinds {
			sm := &sampler{res: result.Result{
				Network: network, Workload: k, Placement: string(pl), Round: round, Step: step,
				Params: map[string]any{"repeat": n},
			}, sums: map[string]time.Duration{}}
			if nb, ok := d.(backend.Named); ok {
				sm.res.Backend = nb.Backend()
			}
			for k, v := range d.Params() {
				sm.res.Params[k] = v
			}
			ps, ok := d.(backend.PodStarter)
			cs, cok := d.(backend.CNIStarter)
			switch {
			case !ok:
				sm.res.Error = "this backend cannot create pods on demand"
			case k == CNIName && !cok:
				sm.res.Error = "this backend cannot run the real CNI plugins"
			case k == CNIName:
				sm.start = cs.StartPodCNI
			default:
				sm.start, sm.ps = ps.StartPod, ps
			}
			runs = append(runs, sm)
		}
		// the kinds take turns, the first changing from pod to pod, so
		// that the machine's drift and each kind's leftovers hit both
		for i := 1; i <= n; i++ {
			for j := range runs {
				sm := runs[(i+j)%len(runs)]
				if sm.start == nil || sm.res.Error != "" {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				tag := tags[pl]
				if sm.res.Workload == CNIName {
					tag = "c" + tag
				}
				s, err := sm.start(ctx, client, peer, fmt.Sprintf("%s%d", tag, (round-1)*n+i))
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					sm.res.Error = fmt.Sprintf("pod %d: %v", i, err)
					continue
				}
				sm.add(s)
			}
		}
		for _, sm := range runs {
			sm.finish(n)
			rec.Result(sm.res)
		}
		return nil
	}}
}

// sampler gathers one kind's samples of a cell.
type sampler struct {
	res    result.Result
	start  func(ctx context.Context, near, peer, name string) (backend.StartupSample, error)
	ps     backend.PodStarter // for the network's setup phases
	totals []time.Duration
	bare   []time.Duration
	sums   map[string]time.Duration
}

func (sm *sampler) add(s backend.StartupSample) {
	sm.res.Path = s.Path
	sm.totals = append(sm.totals, s.Total)
	if s.Bare > 0 {
		sm.bare = append(sm.bare, s.Bare)
	}
	for ph, d := range s.Phases {
		sm.sums[ph] += d
	}
}

func (sm *sampler) finish(n int) {
	if sm.res.Error != "" {
		return
	}
	res := &sm.res
	res.Metrics.StartupMs = Summarize(sm.totals)
	res.Metrics.PhasesMs = map[string]float64{}
	for ph, d := range sm.sums {
		res.Metrics.PhasesMs[ph] = float64(d) / 1e6 / float64(n)
	}
	res.Metrics.Extra = map[string]float64{}
	if noNet := Summarize(sm.bare)["mean"]; noNet > 0 {
		res.Metrics.Extra[result.ExtraNoNetworkMs] = noNet
		res.Metrics.Extra[result.ExtraVsNoNetwork] = res.Metrics.StartupMs["mean"] / noNet
	}
	if sm.ps != nil {
		for ph, d := range sm.ps.SetupPhases() {
			res.Metrics.Extra[result.ExtraSetupPhaseMs(ph)] = float64(d) / 1e6
		}
	}
}

// Summarize returns mean, p50, p95, min and max of ds in milliseconds.
func Summarize(ds []time.Duration) map[string]float64 {
	if len(ds) == 0 {
		return nil
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	rank := func(q float64) time.Duration { // nearest rank
		i := int(q*float64(len(s))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return map[string]float64{
		"mean": ms(sum / time.Duration(len(s))), "p50": ms(rank(0.50)), "p95": ms(rank(0.95)),
		"min": ms(s[0]), "max": ms(s[len(s)-1]),
	}
}
