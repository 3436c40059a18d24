// Package density is the density experiment (--density 10,50,110,250, the
// density suite): what a network costs as its nodes fill with pods. Each
// count is a deployment of its own in which every host carries that many
// idle pods besides the measured pair, built by the network like any pod
// (their veths, routes, FDB and neighbour entries, BGP routes, rules as
// each network makes them) but running nothing; in it the pair workloads
// (tcp_rr latency, tcp_crr rate) and the start-up of new pods are measured,
// every count in the same interleaved rounds, each result labelled
// "density=N". The report pairs each count with the smallest by round.
package density

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/experiment/pairs"
	"github.com/cnperf/cnperf/internal/experiment/startup"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/workload"
)

// Before the start-up experiment (20): with --density it takes startup too.
func init() { experiment.Register(Density{}, 15) }

// Max bounds a count: a host's pod subnet holds at most 1021 pods here.
const Max = 1000

// DefaultStartupPods is how many pods start-up creates per round here.
const DefaultStartupPods = 5

// Density is the experiment.
type Density struct{}

// Name implements experiment.Experiment.
func (Density) Name() string { return "density" }

// Summary implements experiment.Experiment.
func (Density) Summary() string {
	return "the pair workloads and start-up while every host carries N idle pods (--density 10,50,110,250), paired with the smallest N"
}

// Step labels the results measured beside n idle pods a host.
func Step(n int) string { return "density=" + strconv.Itoa(n) }

// Of reads the count from a step label, 0 when it has none.
func Of(step string) int {
	n, err := strconv.Atoi(stepValue(step))
	if err != nil {
		return 0
	}
	return n
}

func stepValue(step string) string {
	const p = "density="
	if len(step) > len(p) && step[:len(p)] == p {
		end := len(p)
		for end < len(step) && step[end] != ' ' {
			end++
		}
		return step[len(p):end]
	}
	return ""
}

// Option is --density.
var Option = option.Spec{Name: "density", Kind: option.Ints, Example: "10,50,110,250",
	Help:      "idle pods on every host, a deployment per count (e.g. 10,50,110,250): tcp_rr, tcp_crr and startup measured beside them, paired with the smallest count",
	AppliesTo: "tcp_rr, tcp_crr and startup"}

// startupPods is --startup-pods, which density takes for its start-up
// cells.
var startupPods = func() option.Spec { s := startup.Pods; s.AppliesTo = "--density"; return s }()

// Options implements experiment.Optioner.
func (Density) Options() []option.Spec { return []option.Spec{Option, startupPods} }

// Claim takes startup and the single-step pair workloads when the plan has
// densities.
func (Density) Claim(p *experiment.Plan) []string {
	if len(p.Ints(Option.Name)) == 0 {
		return nil
	}
	var out []string
	for _, name := range p.Workloads {
		if name == startup.Name {
			out = append(out, name)
			continue
		}
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
func (Density) Validate(p *experiment.Plan, workloads []string) error {
	for _, n := range p.Ints(Option.Name) {
		if n < 0 || n > Max {
			return fmt.Errorf("--density %d; use 0 to %d idle pods a host", n, Max)
		}
	}
	var pw []string
	for _, w := range workloads {
		if w != startup.Name {
			pw = append(pw, w)
		}
	}
	if len(pw) == 0 {
		return nil
	}
	return pairs.Pairs{}.Validate(p, pw)
}

// Units implements experiment.Experiment: a deployment per network and
// count, the pairs' topology plus the idle pods.
func (Density) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	order, byNet := pairs.ByNetwork(p)
	ccpu, scpu := p.CPUs()
	n := p.Int(startupPods.Name)
	if n == 0 {
		n = DefaultStartupPods
	}
	rounds := max(p.Rounds, 1)
	counts := p.Ints(Option.Name)
	slices.Sort(counts)
	var units []sched.Unit
	port := 5201
	for _, net := range order {
		for _, d := range counts {
			topo, prs := pairs.Topology(net, byNet[net], ccpu, scpu)
			topo.IdlePods = d
			topo.PodsPerHost = d + n*rounds + 8
			u := sched.Unit{Name: net + " " + Step(d), Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: net}}
			for _, pr := range prs {
				for _, name := range workloads {
					if name == startup.Name {
						if pr.Placement != ground.SamePod {
							u.Cells = append(u.Cells, startup.Cell(net, pr.Placement, pr.Client, pr.Server, n, []string{startup.Name}, Step(d)))
						}
						continue
					}
					w, _ := workload.Get(name)
					base := p.Params
					w.Defaults(&base)
					cell := pairs.VariantCell(string(pr.Placement)+" "+name+" "+Step(d), w, base, pr.Placement, pr.Client, pr.Server, p.PinParam(), &port, pairs.Variant{Step: Step(d)})
					u.Cells = append(u.Cells, cell)
				}
			}
			units = append(units, u)
		}
	}
	return units, nil
}

// TakesFlag implements experiment.FlagTaker: start-up's pods a round are
// also its own.
func (Density) TakesFlag(name string) bool { return name == "startup-pods" }
