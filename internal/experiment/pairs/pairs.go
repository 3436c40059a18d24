// Package pairs is the experiment of seed 001's figures: a client and a
// server pod per placement on each network, every workload run between
// them. One deployment per network holds the pods of every placement
// asked; each placement × workload is a cell.
package pairs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/tuning"
	"github.com/cnperf/cnperf/internal/workload"
)

func init() { experiment.Register(Pairs{}, 100) }

// Pairs is the experiment.
type Pairs struct{}

// Name implements experiment.Experiment.
func (Pairs) Name() string { return "pairs" }

// Summary implements experiment.Experiment.
func (Pairs) Summary() string {
	return "a client and a server pod per placement, every workload between them (rr, stream, rate, qps)"
}

// Flows is --parallel, taken by the experiments that run pairs of flows
// (parallel, and a size sweep's).
var Flows = option.Spec{Name: "parallel", Kind: option.Int, Default: "1", Example: "4",
	Help:      "stream and rr workloads: run N flows at once between each pair: aggregate, per-flow figures and Jain's fairness",
	AppliesTo: "the pair workloads (e.g. tcp_rr, tcp_stream; not rate steps, services or alltoall)"}

// Sizes is --message-size given as a list: more than one size sweeps
// (one size is every workload's message size, a parameter of the run).
var Sizes = option.Spec{Name: "message-size", Kind: option.Ints, Example: "64,1024,65536",
	Help:      "message sizes in bytes to sweep, e.g. 64,256,1024,4096,16384,65536: one result per size",
	AppliesTo: "the stream and rr workloads (a list of sizes)"}

// Tuning is --tuning, the pair cells' host-tuning profiles.
var Tuning = option.Spec{Name: "tuning", Kind: option.List, Example: "none,study", Alone: true,
	Help:      "host tuning applied inside the lab's namespaces: none, study (seed 000's: NOTRACK, RPS/RFS, sysctls for many connections) or one part of it (study-sysctls, study-notrack, study-rps); a list (none,study) measures every pair cell with each, interleaved",
	AppliesTo: "plain pair cells (e.g. tcp_rr, tcp_stream, http_rate, as the seed-latency suite does)"}

// Options implements experiment.Optioner.
func (Pairs) Options() []option.Spec { return []option.Spec{Tuning} }

// Claim takes every workload registered as an agent workload.
func (Pairs) Claim(p *experiment.Plan) []string {
	var out []string
	for _, name := range p.Workloads {
		if _, err := workload.Get(name); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// Validate implements experiment.Experiment.
func (Pairs) Validate(p *experiment.Plan, workloads []string) error {
	if t := p.Option(Tuning.Name); t != "" {
		if _, err := tuning.ParseList(t); err != nil {
			return err
		}
	}
	for _, name := range workloads {
		w, err := workload.Get(name)
		if err != nil {
			return err
		}
		params := p.Params
		w.Defaults(&params)
		if err := w.Validate(params); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Pair names the pods of one placement.
type Pair struct {
	Placement      ground.Placement
	Client, Server string
}

// Topology is the pods a network needs for placements: the client c1 on
// host 1; same-pod: a second container beside it; same-host: s1 on host
// 1; cross-host: s2 on host 2.
func Topology(network string, placements []ground.Placement, clientCPU, serverCPU int) (backend.Topology, []Pair) {
	t := backend.Topology{Network: network, Hosts: 1}
	t.Pods = append(t.Pods, backend.PodSpec{Name: "c1", Host: 1, CPU: clientCPU})
	have := map[string]bool{"c1": true}
	var pairs []Pair
	for _, pl := range placements {
		var ps backend.PodSpec
		switch pl {
		case ground.SamePod:
			ps = backend.PodSpec{Name: "c1-side", Host: 1, With: "c1", CPU: serverCPU}
		case ground.SameHost:
			ps = backend.PodSpec{Name: "s1", Host: 1, CPU: serverCPU}
		default:
			ps = backend.PodSpec{Name: "s2", Host: 2, CPU: serverCPU}
			t.Hosts = 2
		}
		if !have[ps.Name] {
			have[ps.Name] = true
			t.Pods = append(t.Pods, ps)
		}
		pairs = append(pairs, Pair{pl, "c1", ps.Name})
	}
	return t, pairs
}

// Units implements experiment.Experiment: one unit per network, or, with
// --tuning, one per network and tuning profile (each a deployment of its
// own, tuned once its pods are up), their cells interleaved in the rounds
// and labelled "tuning=NAME" at the end of their step.
func (Pairs) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	order, byNet := ByNetwork(p)
	ccpu, scpu := p.CPUs()
	var units []sched.Unit
	port := 5201
	tunings, _ := tuning.ParseList(p.Option(Tuning.Name))
	if len(tunings) == 0 {
		tunings = []string{""}
	}
	for _, tn := range tunings {
		for _, net := range order {
			topo, pairs := Topology(net, byNet[net], ccpu, scpu)
			topo.Tuning = tn
			name, v := net, Variant{}
			if tn != "" {
				name += " " + tuning.Label(tn)
				v.Suffix = tuning.Label(tn)
			}
			u := sched.Unit{Name: name, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
			for _, pr := range pairs {
				for _, wname := range workloads {
					w, _ := workload.Get(wname)
					base := p.Params
					w.Defaults(&base)
					u.Cells = append(u.Cells, VariantCell(string(pr.Placement)+" "+wname+suffix(v.Suffix), w, base, pr.Placement, pr.Client, pr.Server, p.PinParam(), &port, v))
				}
			}
			units = append(units, u)
		}
	}
	return units, nil
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// Cell measures workload w between client and server, each step of a
// multi-step workload in turn, on a fresh port each time (a port freed by
// the last measurement may still be in TIME_WAIT).
func Cell(name string, w workload.Workload, base workload.Params, pl ground.Placement, client, server, pin string, port *int) sched.Cell {
	return VariantCell(name, w, base, pl, client, server, pin, port, Variant{})
}

// Variant is what an experiment built on pairs changes in a cell: a label
// before its steps' (a message size of a sweep, a flow count) and the
// number of flows run at once.
type Variant struct {
	Step  string
	Flows int
	// Suffix ends every step's label (the tuning profile: "tuning=study"),
	// after the workload's own (so a search step still starts "search ").
	Suffix string
}

func (v Variant) step(label string) string {
	var parts []string
	for _, s := range []string{v.Step, label, v.Suffix} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// VariantCell is Cell with a variant.
func VariantCell(name string, w workload.Workload, base workload.Params, pl ground.Placement, client, server, pin string, port *int, v Variant) sched.Cell {
	return sched.Cell{Name: name, Planned: Planned(w, base), Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
		experiment.Steps(w, base, func() bool { return ctx.Err() != nil }, func(params workload.Params, label string) workload.StepResult {
			params.Port = *port
			if *port += max(1, v.Flows); *port > 60000 {
				*port = 5201
			}
			res := measure.Measure(ctx, d, measure.Spec{Workload: w, Params: params, Client: client, Servers: []string{server}, Flows: v.Flows})
			sr := workload.StepResult{Params: params, Metrics: res.Metrics}
			if ctx.Err() != nil {
				return sr
			}
			res.Placement, res.Step, res.Round = string(pl), v.step(label), round
			if pin != "" {
				res.Params["pinned_cpus"] = pin
			}
			if _, prof := tuning.StepOf(v.Suffix); prof != "" {
				res.Params["tuning"] = prof
			}
			if res.Error != "" {
				sr.Err = fmt.Errorf("%s", res.Error)
			}
			rec.Result(res)
			return sr
		})
		return nil
	}}
}

// Planned is how long a cell of w measures: its duration, or 0 (not
// known) for a workload measured in steps (a search ends when it ends).
func Planned(w workload.Workload, base workload.Params) time.Duration {
	if _, stepped := w.(workload.Stepper); stepped {
		return 0
	}
	return base.Duration
}

// ByNetwork groups p's cases by network, in the order first named.
func ByNetwork(p *experiment.Plan) (order []string, placements map[string][]ground.Placement) {
	placements = map[string][]ground.Placement{}
	for _, c := range p.Cases {
		if _, seen := placements[c.Network]; !seen {
			order = append(order, c.Network)
		}
		placements[c.Network] = append(placements[c.Network], c.Placement)
	}
	return order, placements
}

// Sweep is one variant of every cell of a sweep over the pairs (a
// message size, a number of flows): how it is labelled and run, and what
// it sets in the workload's parameters before their defaults (nil: none).
type Sweep struct {
	Variant
	Set func(p *workload.Params)
}

// SweepUnits is the pairs' deployment per network, with a cell per
// placement, workload and sweep variant, in that order: the units of the
// size sweep and of the parallel flows.
func SweepUnits(p *experiment.Plan, workloads []string, sweeps []Sweep) []sched.Unit {
	order, byNet := ByNetwork(p)
	ccpu, scpu := p.CPUs()
	var units []sched.Unit
	port := 5201
	for _, net := range order {
		topo, prs := Topology(net, byNet[net], ccpu, scpu)
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		for _, pr := range prs {
			for _, name := range workloads {
				w, _ := workload.Get(name)
				for _, sw := range sweeps {
					base := p.Params
					if sw.Set != nil {
						sw.Set(&base)
					}
					w.Defaults(&base)
					u.Cells = append(u.Cells, VariantCell(string(pr.Placement)+" "+name+" "+sw.Step, w, base, pr.Placement, pr.Client, pr.Server, p.PinParam(), &port, sw.Variant))
				}
			}
		}
		units = append(units, u)
	}
	return units
}

// Finish implements experiment.Finisher: with --tuning none and another
// profile, every tuned result gets the ratio of its cell's main figure to
// the same cell untuned (tuning=none), paired by round, with its interval
// and verdict (VsUntuned).
func (Pairs) Finish(run *result.Run) {
	PairByRound(run, func(r result.Result) (result.CellKey, bool, bool) {
		_, prof := tuning.StepOf(r.Step)
		if prof == "" {
			return result.CellKey{}, false, false
		}
		uk := r.Key()
		uk.Step = tuning.WithProfile(uk.Step, tuning.None)
		return uk, prof == tuning.None, true
	}, func(r *result.Result, c result.Comparison) { r.VsUntuned = &c })
}

// PairByRound compares cells of run with reference cells measured beside
// them in the same rounds: every cell's main figure with its reference's,
// paired by round (stats.Paired: the ratio with its interval and
// verdict), given to each of the cell's results through set. part says
// how a result takes part: not at all (ok false), as a reference (ref),
// or as a cell compared with the reference cell against. The noisy
// neighbours' cells against the quiet ones and the tuned cells against
// the untuned ones are both compared so.
func PairByRound(run *result.Run, part func(r result.Result) (against result.CellKey, ref, ok bool), set func(r *result.Result, c result.Comparison)) {
	type cell struct {
		idx     []int
		vals    []float64
		better  result.Better
		against result.CellKey
	}
	refs := map[result.CellKey]map[int]float64{}
	cells := map[result.CellKey]*cell{}
	var order []result.CellKey
	for i, r := range run.Results {
		if r.Error != "" {
			continue
		}
		against, ref, ok := part(r)
		if !ok {
			continue
		}
		w, err := workload.Get(r.Workload)
		if err != nil {
			continue
		}
		f := w.Figures()[0]
		v, ok := r.Metrics.Value(f.Key)
		if !ok {
			continue
		}
		k := r.Key()
		if ref {
			if refs[k] == nil {
				refs[k] = map[int]float64{}
			}
			refs[k][r.Round] = v
			continue
		}
		c := cells[k]
		if c == nil {
			c = &cell{better: f.Better, against: against}
			cells[k] = c
			order = append(order, k)
		}
		c.idx = append(c.idx, i)
		c.vals = append(c.vals, v)
	}
	for _, k := range order {
		c := cells[k]
		var a, b []float64
		for j, i := range c.idx {
			if rv, ok := refs[c.against][run.Results[i].Round]; ok {
				a, b = append(a, c.vals[j]), append(b, rv)
			}
		}
		cmp, ok := stats.Paired(a, b, c.better, stats.Default)
		if !ok {
			continue
		}
		cmp.Against = c.against
		for _, i := range c.idx {
			set(&run.Results[i], cmp)
		}
	}
}
