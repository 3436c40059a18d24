// Package sizes is the message-size sweep of seed 001 (INFOCOM 2018,
// Figures 4-5: throughput against message size, where overlays stop
// scaling as messages grow): every stream and rr workload measured between
// the same pods of each network at each size of --message-size
// 64,256,...,65536, one result per size (its step "size=N"), every size a
// cell of its own in the interleaved rounds.
package sizes

import (
	"fmt"
	"strconv"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { experiment.Register(Sizes{}, 90) }

// Default are the paper's sizes.
var Default = []int{64, 256, 1024, 4096, 16384, 65536}

// Sizes is the experiment.
type Sizes struct{}

// Name implements experiment.Experiment.
func (Sizes) Name() string { return "sizes" }

// Summary implements experiment.Experiment.
func (Sizes) Summary() string {
	return "message-size sweep: every stream and rr workload at each --message-size, one result per size"
}

// Step labels the results of one size.
func Step(size int) string { return "size=" + strconv.Itoa(size) }

// Options implements experiment.Optioner: the sizes, and --parallel
// flows at each size.
func (Sizes) Options() []option.Spec { return []option.Spec{pairs.Sizes, pairs.Flows} }

// SelectedBy implements experiment.Selector.
func (Sizes) SelectedBy() string { return "a --message-size sweep" }

// Claim takes the single-step agent workloads (streams, rr) when the plan
// sweeps more than one size.
func (Sizes) Claim(p *experiment.Plan) []string {
	if len(p.Ints(pairs.Sizes.Name)) < 2 {
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

// Validate checks every size against every workload before anything is
// built (0, or a UDP datagram over 65507 bytes, is an error naming the
// range).
func (Sizes) Validate(p *experiment.Plan, workloads []string) error {
	seen := map[int]bool{}
	for _, size := range p.Ints(pairs.Sizes.Name) {
		if size <= 0 {
			return fmt.Errorf("--message-size %d: sizes must be positive, e.g. --message-size 64,1024,65536", size)
		}
		if seen[size] {
			return fmt.Errorf("--message-size: %d is given twice; name each size once", size)
		}
		seen[size] = true
		for _, name := range workloads {
			w, _ := workload.Get(name)
			params := p.Params
			params.MessageSize = size
			w.Defaults(&params)
			if err := w.Validate(params); err != nil {
				return fmt.Errorf("--message-size %d: %s: %w", size, name, err)
			}
		}
	}
	return nil
}

// Units implements experiment.Experiment: one deployment per network, a
// cell per placement, workload and size.
func (Sizes) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	flows := p.Int(pairs.Flows.Name)
	var sweeps []pairs.Sweep
	for _, size := range p.Ints(pairs.Sizes.Name) {
		v := pairs.Variant{Step: Step(size), Flows: flows}
		if flows > 1 {
			v.Step += " flows=" + strconv.Itoa(flows)
		}
		sweeps = append(sweeps, pairs.Sweep{Variant: v, Set: func(pp *workload.Params) { pp.MessageSize = size }})
	}
	return pairs.SweepUnits(p, workloads, sweeps), nil
}
