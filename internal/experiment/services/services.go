// Package services is the ClusterIP experiment (seed 003): per network,
// for every load balancer and every scale step, a deployment with a client
// pod on host 1 and backend pods on the other hosts (beside it on host 1
// where a case asks for same-host), that many services programmed in
// front of the backends (the measured one last, so it sits
// at the end of any linear rule list), and each workload run with its
// server half on every backend and its client half against the service's
// virtual IP. The reference (lb "none") dials one backend's pod IP. Each
// load balancer and step gets a deployment of its own: what one leaves
// behind (TIME_WAIT sockets, conntrack entries, netfilter tables that keep
// conntrack on) would otherwise slow the next, and a Kubernetes cluster
// runs one of them anyway. On a backend whose deployments share their
// services (a cluster: backend.SharedServices), each count and placement is
// a phase of its own instead (Plan.PhasedServices), measured after the
// other.
package services

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/experiment"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/measure"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/sched"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all" // the load balancers
	"github.com/cnperf/cnperf/internal/workload"
)

// Backends is how many backend pods each service has.
const Backends = 3

// BackendPort is the pods' port (targetPort).
const BackendPort = 8080

// MaxServices bounds a scale step.
const MaxServices = 50000

func init() { experiment.Register(Services{}, 10) }

// Services is the experiment.
type Services struct{}

// Name implements experiment.Experiment.
func (Services) Name() string { return "services" }

// Summary implements experiment.Experiment.
func (Services) Summary() string {
	return "ClusterIP services: every workload through a virtual IP per load balancer and service count (--lb, --services)"
}

// Claim takes the whole plan when it names load balancers.
func (Services) Claim(p *experiment.Plan) []string {
	if len(p.LBs) == 0 {
		return nil
	}
	return append([]string(nil), p.Workloads...)
}

// Validate implements experiment.Experiment.
func (Services) Validate(p *experiment.Plan, workloads []string) error {
	seen := map[string]bool{}
	for _, name := range p.LBs {
		if seen[name] {
			return fmt.Errorf("load balancer %s listed twice", name)
		}
		seen[name] = true
		if name == svc.None || name == svc.ClusterProxy {
			continue // the pod IP; a cluster's own proxy (the kubernetes backend's)
		}
		if _, err := svc.New(name); err != nil {
			return err
		}
	}
	for _, n := range p.Services {
		if n < 1 || n > MaxServices {
			return fmt.Errorf("--services %d; use 1 to %d", n, MaxServices)
		}
	}
	for _, name := range workloads {
		w, err := workload.Get(name)
		if err != nil {
			return err
		}
		if w.Proto() != "tcp" && w.Proto() != "udp" {
			return fmt.Errorf("%s through a service: services carry TCP and UDP workloads only", name)
		}
		params := p.Params
		w.Defaults(&params)
		if err := w.Validate(params); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// ValidatePlan checks the services part of any plan: --services without
// --lb is an error.
func ValidatePlan(p *experiment.Plan) error {
	if len(p.LBs) == 0 && len(p.Services) > 0 {
		return errors.New("--services needs --lb (which load balancer programs them)")
	}
	return nil
}

func needsUDP(workloads []string) bool {
	for _, name := range workloads {
		if w, err := workload.Get(name); err == nil && w.Proto() == "udp" {
			return true
		}
	}
	return false
}

// Units implements experiment.Experiment.
func (Services) Units(p *experiment.Plan, workloads []string) ([]sched.Unit, error) {
	counts := p.Services
	if len(counts) == 0 {
		counts = []int{1}
	}
	udp := needsUDP(workloads)
	var units []sched.Unit
	type key struct {
		network string
		same    bool
	}
	seen := map[key]bool{}
	// per network its placements: a case asking for same-host puts the
	// backends beside the client; any other, on other hosts where the
	// backend has them (one topology each)
	perNet := map[string]int{}
	for _, c := range p.Cases {
		if k := (key{c.Network, c.Placement == ground.SameHost}); !seen[k] {
			seen[k] = true
			perNet[c.Network]++
		}
	}
	seen = map[key]bool{}
	for _, c := range p.Cases {
		same := c.Placement == ground.SameHost
		if seen[key{c.Network, same}] {
			continue
		}
		seen[key{c.Network, same}] = true
		pls, err := p.Backend.Placements(c.Network)
		if err != nil {
			return nil, err
		}
		cross := false
		for _, pl := range pls {
			cross = cross || (pl == ground.CrossHost && !same)
		}
		topo := backend.Topology{Network: c.Network, Hosts: 1, OwnAddresses: true, Services: true}
		topo.Pods = []backend.PodSpec{{Name: "c1", Host: 1, CPU: -1}}
		place := ground.SameHost
		var names []string
		if cross {
			topo.Hosts = 3
			place = ground.CrossHost
		}
		for i := 0; i < Backends; i++ {
			h := 1
			if cross {
				h = 2 + i%(topo.Hosts-1)
			}
			name := fmt.Sprintf("b%d", i+1)
			topo.Pods = append(topo.Pods, backend.PodSpec{Name: name, Host: h, CPU: -1})
			names = append(names, name)
		}
		for _, lb := range p.LBs {
			if s, ok := p.Backend.(backend.LBServer); ok && !s.ServesLB(lb) {
				continue // another backend's (a run on lab,kubernetes)
			}
			steps := counts
			if lb == svc.None {
				steps = []int{0}
			}
			for i, n := range steps {
				u := unit(p, c.Network, lb, n, udp, topo, place, names, workloads)
				if perNet[c.Network] > 1 { // both placements: tell the units apart
					u.Name += " " + string(place)
					u.Skip.Placement = string(place)
				}
				if p.PhasedServices {
					// one phase per count and placement, the same on
					// every backend of the run (lb none: the first count's)
					u.Phase = 2 * i
					if same {
						u.Phase++
					}
				}
				units = append(units, u)
			}
		}
	}
	return units, nil
}

func unit(p *experiment.Plan, network, lb string, n int, udp bool, topo backend.Topology, place ground.Placement, backends []string, workloads []string) sched.Unit {
	name := network + " lb=" + lb
	if n > 0 {
		name += fmt.Sprintf(" services=%d", n)
	}
	var set backend.ServiceSet
	u := sched.Unit{Name: name, Backend: p.Backend, Topology: topo, Skip: result.Skip{Network: network + " lb=" + lb}}
	if lb == svc.None {
		u.Skip = result.Skip{Network: network}
	}
	u.Prepare = func(ctx context.Context, d backend.Deployment) (func() error, error) {
		if lb == svc.None {
			b := d.Pod(backends[0])
			set.Target = netip.AddrPortFrom(b.IP, BackendPort)
			set.Path = fmt.Sprintf("pod %s %s", b.Name, set.Target)
			return nil, nil
		}
		sh, ok := d.(backend.ServiceHost)
		if !ok {
			return nil, backend.Skip(fmt.Sprintf("the %s backend cannot program services", p.Backend.Name()))
		}
		s, clean, err := sh.ProgramServices(ctx, lb, n, udp, "c1", backends)
		set = s
		return clean, err
	}
	for _, wname := range workloads {
		w, _ := workload.Get(wname)
		variants := []map[string]string{nil}
		if v, ok := w.(workload.Varied); ok && !chosen(v.Variants(), p.Params.Extra) {
			variants = v.Variants()
		}
		for _, vset := range variants {
			base := p.Params
			base.Extra = merge(p.Params.Extra, vset)
			w.Defaults(&base)
			vset := vset
			cellName := wname
			if s := step(0, vset, ""); s != "" {
				cellName += " " + s
			}
			u.Cells = append(u.Cells, sched.Cell{Name: cellName, Run: func(ctx context.Context, d backend.Deployment, round int, rec *sched.Recorder) error {
				experiment.Steps(w, base, func() bool { return ctx.Err() != nil }, func(params workload.Params, label string) workload.StepResult {
					params.Port = BackendPort
					res := measure.Measure(ctx, d, measure.Spec{Workload: w, Params: params, Client: "c1", Servers: backends, Addr: set.Target, Path: set.Path})
					sr := workload.StepResult{Params: params, Metrics: res.Metrics}
					if ctx.Err() != nil {
						return sr
					}
					res.Placement, res.LB, res.Services, res.Round = string(place), lb, n, round
					res.Step = step(n, vset, label)
					res.Params["backends"] = len(backends)
					if n > 0 {
						res.Params["services"] = n
						if res.Metrics.Extra == nil {
							res.Metrics.Extra = map[string]float64{}
						}
						res.Metrics.Extra[result.ExtraSyncS] = set.Sync.Seconds()
					}
					if res.Error != "" {
						sr.Err = errors.New(res.Error)
					}
					rec.Result(res)
					return sr
				})
				return nil
			}})
		}
	}
	return u
}

// chosen reports whether the user set a key of the variants already.
func chosen(variants []map[string]string, extra map[string]string) bool {
	for _, v := range variants {
		for k := range v {
			if extra[k] != "" {
				return true
			}
		}
	}
	return false
}

func step(n int, set map[string]string, label string) string {
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("services=%d", n))
	}
	for _, k := range sortedKeys(set) {
		parts = append(parts, k+"="+set[k])
	}
	if label != "" {
		parts = append(parts, label)
	}
	return strings.Join(parts, " ")
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

func merge(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Finish adds the study's figures to service results: each rate's %
// difference to iptables and to ipvs measured on the same network, number
// of services, workload step and round (the reference, lb none, compares
// with the smallest service count).
func (Services) Finish(run *result.Run) { Compare(run.Results) }

// Compare is Finish on a list of results.
func Compare(results []result.Result) {
	type key struct {
		network, workload, kind string
		round                   int
	}
	kindOf := func(r result.Result) string {
		k, _ := r.Params["keepalive"].(string)
		return k
	}
	ref := map[string]map[key]map[int]float64{}
	for _, lb := range result.StudyLBs {
		ref[lb] = map[key]map[int]float64{}
	}
	for _, r := range results {
		if r.Error != "" || r.Metrics.TransactionsPerS == nil {
			continue
		}
		if m, ok := ref[r.LB]; ok {
			k := key{r.Network, r.Workload, kindOf(r), r.Round}
			if m[k] == nil {
				m[k] = map[int]float64{}
			}
			m[k][r.Services] = *r.Metrics.TransactionsPerS
		}
	}
	for i := range results {
		r := &results[i]
		if r.Error != "" || r.Metrics.TransactionsPerS == nil || r.LB == "" {
			continue
		}
		for name, m := range ref {
			if r.LB == name {
				continue
			}
			byN := m[key{r.Network, r.Workload, kindOf(*r), r.Round}]
			n := r.Services
			if n == 0 { // the reference: against the smallest count
				n = -1
				for c := range byN {
					if n < 0 || c < n {
						n = c
					}
				}
			}
			if b, ok := byN[n]; ok && b > 0 {
				if r.Metrics.Extra == nil {
					r.Metrics.Extra = map[string]float64{}
				}
				r.Metrics.Extra[result.ExtraVsLB(name)] = 100 * (*r.Metrics.TransactionsPerS/b - 1)
			}
		}
	}
}
