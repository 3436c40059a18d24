// Package parallel runs N flows at once between each measured pair
// (--parallel N), what one flow cannot show: whether a network fills the
// link only with several flows, and how fairly it shares it among them.
// Each result is the aggregate of its flows (throughput or transactions/s
// summed, latencies over every transaction), each flow's figures in
// Result.Flows, and Jain's fairness index with the smallest and largest
// flow's main figure in Metrics.Extra.
package parallel

import (
	"fmt"
	"strconv"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { experiment.Register(Parallel{}, 95) }

// Max bounds --parallel: every flow is a server job and a client job in
// the pair's agents, on ports of their own.
const Max = 64

// Parallel is the experiment.
type Parallel struct{}

// Name implements experiment.Experiment.
func (Parallel) Name() string { return "parallel" }

// Summary implements experiment.Experiment.
func (Parallel) Summary() string {
	return "N flows at once between each pair (--parallel N): aggregate and per-flow figures, Jain's fairness"
}

// Step labels the results of n flows.
func Step(n int) string { return "flows=" + strconv.Itoa(n) }

// Options implements experiment.Optioner: --parallel.
func (Parallel) Options() []option.Spec { return []option.Spec{pairs.Flows} }

// SelectedBy implements experiment.Selector.
func (Parallel) SelectedBy() string { return "--parallel flows" }

// Claim takes the single-step agent workloads (streams, rr) when the plan
// asks for more than one flow.
func (Parallel) Claim(p *experiment.Plan) []string {
	if p.Int(pairs.Flows.Name) < 2 {
		return nil
	}
	var out []string
	for _, name := range p.Workloads {
		w, err := workload.Get(name)
		if err != nil {
			continue
		}
		if _, stepped := w.(workload.Stepper); !stepped {
			out = append(out, name)
		}
	}
	return out
}

// Validate implements experiment.Experiment.
func (Parallel) Validate(p *experiment.Plan, workloads []string) error {
	if n := p.Int(pairs.Flows.Name); n > Max {
		return fmt.Errorf("--parallel %d: at most %d flows at once; use --parallel 2 to %d", n, Max, Max)
	}
	return pairs.Pairs{}.Validate(p, workloads)
}

// Units implements experiment.Experiment: the pairs' topology, each cell
// run with --parallel flows.
func (Parallel) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	flows := p.Int(pairs.Flows.Name)
	v := pairs.Variant{Step: Step(flows), Flows: flows}
	return pairs.SweepUnits(p, workloads, []pairs.Sweep{{Variant: v}}), nil
}
