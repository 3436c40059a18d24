// Package pairs is the experiment of seed 001's figures: a client and a
// server pod per placement on each network, every workload run between
// them. One deployment per network holds the pods of every placement
// asked; each placement × workload is a cell.
package pairs

import (
	"context"
	"fmt"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
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
	Placement      backend.Placement
	Client, Server string
}

// Topology is the pods a network needs for placements: the client c1 on
// host 1; same-pod: a second container beside it; same-host: s1 on host
// 1; cross-host: s2 on host 2.
func Topology(network string, placements []backend.Placement, clientCPU, serverCPU int) (backend.Topology, []Pair) {
	t := backend.Topology{Network: network, Hosts: 1}
	t.Pods = append(t.Pods, backend.PodSpec{Name: "c1", Host: 1, CPU: clientCPU})
	have := map[string]bool{"c1": true}
	var pairs []Pair
	for _, pl := range placements {
		var ps backend.PodSpec
		switch pl {
		case backend.SamePod:
			ps = backend.PodSpec{Name: "c1-side", Host: 1, With: "c1", CPU: serverCPU}
		case backend.SameHost:
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

// Units implements experiment.Experiment: one unit per network.
func (Pairs) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	var order []string
	byNet := map[string][]backend.Placement{}
	for _, c := range p.Cases {
		if _, seen := byNet[c.Network]; !seen {
			order = append(order, c.Network)
		}
		byNet[c.Network] = append(byNet[c.Network], c.Placement)
	}
	ccpu, scpu := p.CPUs()
	var units []sched.Unit
	port := 5201
	for _, net := range order {
		topo, pairs := Topology(net, byNet[net], ccpu, scpu)
		u := sched.Unit{Name: net, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
		for _, pr := range pairs {
			for _, name := range workloads {
				w, _ := workload.Get(name)
				base := p.Params
				w.Defaults(&base)
				u.Cells = append(u.Cells, Cell(string(pr.Placement)+" "+name, w, base, pr.Placement, pr.Client, pr.Server, p.PinParam(), &port))
			}
		}
		units = append(units, u)
	}
	return units, nil
}

// Cell measures workload w between client and server, each step of a
// multi-step workload in turn, on a fresh port each time (a port freed by
// the last measurement may still be in TIME_WAIT).
func Cell(name string, w workload.Workload, base workload.Params, pl backend.Placement, client, server, pin string, port *int) sched.Cell {
	return VariantCell(name, w, base, pl, client, server, pin, port, Variant{})
}

// Variant is what an experiment built on pairs changes in a cell: a label
// before its steps' (a message size of a sweep, a flow count) and the
// number of flows run at once.
type Variant struct {
	Step  string
	Flows int
}

func (v Variant) step(label string) string {
	switch {
	case v.Step == "":
		return label
	case label == "":
		return v.Step
	}
	return v.Step + " " + label
}

// VariantCell is Cell with a variant.
func VariantCell(name string, w workload.Workload, base workload.Params, pl backend.Placement, client, server, pin string, port *int, v Variant) sched.Cell {
	return sched.Cell{Name: name, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
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
			if res.Error != "" {
				sr.Err = fmt.Errorf("%s", res.Error)
			}
			rec.Result(res)
			return sr
		})
		return nil
	}}
}

// ByNetwork groups p's cases by network, in the order first named.
func ByNetwork(p *experiment.Plan) (order []string, placements map[string][]backend.Placement) {
	placements = map[string][]backend.Placement{}
	for _, c := range p.Cases {
		if _, seen := placements[c.Network]; !seen {
			order = append(order, c.Network)
		}
		placements[c.Network] = append(placements[c.Network], c.Placement)
	}
	return order, placements
}
