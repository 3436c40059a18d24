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
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

// Name is the measurement's name, as a workload would have.
const Name = "startup"

// DefaultPods is how many pods a round creates (the paper's mean of 10).
const DefaultPods = 10

func init() {
	experiment.Register(Startup{}, 20)
	workload.RegisterMeasure(workload.Measure{Name: Name, Summary: summary, Figures: Figures})
}

const summary = "network start-up time: create a pod, time to the first ping reply from a peer (--startup-pods N per round, default 10), per phase"

// Figures: the mean create-to-first-reply time (with its ratio to the
// baseline) and its p95, in milliseconds.
var Figures = []result.Figure{
	{Key: "startup_ms.mean", Label: "ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime, Ratio: true},
	{Key: "startup_ms.p95", Label: "p95 ms", Unit: "ms", Better: result.LowerBetter, Kind: result.KindTime},
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
	return map[string]string{Name: summary}
}

// Claim takes the "startup" measurement.
func (Startup) Claim(p *experiment.Plan) []string {
	for _, w := range p.Workloads {
		if w == Name {
			return []string{Name}
		}
	}
	return nil
}

// TakesFlag implements experiment.FlagTaker: --startup-pods is its own.
func (Startup) TakesFlag(name string) bool { return name == "startup-pods" }

// Validate implements experiment.Experiment.
func (Startup) Validate(p *experiment.Plan, _ []string) error {
	if p.StartupPods < 0 || p.StartupPods > 1000 {
		return fmt.Errorf("--startup-pods %d; use 1 to 1000", p.StartupPods)
	}
	return nil
}

// Units implements experiment.Experiment: one deployment per network, a
// cell per placement.
func (Startup) Units(p *experiment.Plan, _ []string) ([]sched.Unit, error) {
	n := p.StartupPods
	if n == 0 {
		n = DefaultPods
	}
	var order []string
	byNet := map[string][]backend.Placement{}
	for _, c := range p.Cases {
		if _, seen := byNet[c.Network]; !seen {
			order = append(order, c.Network)
		}
		byNet[c.Network] = append(byNet[c.Network], c.Placement)
	}
	var units []sched.Unit
	for _, net := range order {
		topo, prs := pairs.Topology(net, byNet[net], -1, -1)
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		for _, pr := range prs {
			u.Cells = append(u.Cells, cell(net, pr.Placement, pr.Client, pr.Server, n))
		}
		units = append(units, u)
	}
	return units, nil
}

var tags = map[backend.Placement]string{backend.SamePod: "p", backend.SameHost: "h", backend.CrossHost: "x"}

func cell(network string, pl backend.Placement, client, server string, n int) sched.Cell {
	return sched.Cell{Name: string(pl) + " " + Name, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
		res := result.Result{
			Network: network, Workload: Name, Placement: string(pl), Round: round,
			Params: map[string]any{"repeat": n},
		}
		if n, ok := d.(backend.Named); ok {
			res.Backend = n.Backend()
		}
		for k, v := range d.Params() {
			res.Params[k] = v
		}
		ps, ok := d.(backend.PodStarter)
		if !ok {
			res.Error = "this backend cannot create pods on demand"
			rec.Result(res)
			return nil
		}
		peer := server
		if pl == backend.SamePod {
			peer = ""
		}
		var totals, bare []time.Duration
		sums := map[string]time.Duration{}
		for i := 1; i <= n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			s, err := ps.StartPod(ctx, client, peer, fmt.Sprintf("%s%d", tags[pl], (round-1)*n+i))
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Error = fmt.Sprintf("pod %d: %v", i, err)
				rec.Result(res)
				return nil
			}
			res.Path = s.Path
			totals = append(totals, s.Total)
			bare = append(bare, s.Bare)
			for ph, d := range s.Phases {
				sums[ph] += d
			}
		}
		res.Metrics.StartupMs = Summarize(totals)
		res.Metrics.PhasesMs = map[string]float64{}
		for ph, d := range sums {
			res.Metrics.PhasesMs[ph] = float64(d) / 1e6 / float64(n)
		}
		noNet := Summarize(bare)["mean"]
		res.Metrics.Extra = map[string]float64{result.ExtraNoNetworkMs: noNet}
		if noNet > 0 {
			res.Metrics.Extra[result.ExtraVsNoNetwork] = res.Metrics.StartupMs["mean"] / noNet
		}
		for ph, d := range ps.SetupPhases() {
			res.Metrics.Extra[result.ExtraSetupPhaseMs(ph)] = float64(d) / 1e6
		}
		rec.Result(res)
		return nil
	}}
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
