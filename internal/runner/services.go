package runner

// Services: the ClusterIP study (seed 003). A run with Plan.LBs builds, per
// network, a lab of three hosts with a client pod on h1 and backend pods on
// the other hosts, each running an agent; for every load balancer and every
// scale step it programs that many services (the measured one last, so it
// sits at the end of any linear rule list, like a service created after the
// others), records the time that took, and runs each workload with the
// server half on every backend and the client half against the service's
// virtual IP. The reference (lb "none") dials one backend's pod IP.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all" // the load balancers
	"github.com/cnperf/cnperf/internal/workload"
)

// ServiceBackends is how many backend pods each service has.
const ServiceBackends = 3

// ServicePort is the services' port; BackendPort the pods' (targetPort).
const (
	ServicePort = 80
	BackendPort = 8080
)

// MaxServices bounds a scale step.
const MaxServices = 50000

// validateServices checks the service part of a plan.
func (p *Plan) validateServices() error {
	if len(p.LBs) == 0 {
		if len(p.Services) > 0 {
			return errors.New("--services needs --lb (which load balancer programs them)")
		}
		return nil
	}
	seen := map[string]bool{}
	for _, name := range p.LBs {
		if seen[name] {
			return fmt.Errorf("load balancer %s listed twice", name)
		}
		seen[name] = true
		if name == svc.None {
			continue
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
	for _, name := range p.Workloads {
		if w, err := workload.Get(name); err == nil && w.Proto() != "tcp" && w.Proto() != "udp" {
			return fmt.Errorf("%s through a service: services carry TCP and UDP workloads only", name)
		}
	}
	return nil
}

// needsUDP says whether a workload of p speaks UDP, so that the services
// need a UDP port too.
func (p Plan) needsUDP() bool {
	for _, name := range p.Workloads {
		if w, err := workload.Get(name); err == nil && w.Proto() == "udp" {
			return true
		}
	}
	return false
}

// svcLab is a lab built for services: client and backend pods with agents.
type svcLab struct {
	l        *lab.Lab
	client   *lab.Pod
	cAgent   *agent.Client
	cPID     int
	backends []*lab.Pod
	bAgents  []*agent.Client
	place    netmode.Placement
}

func buildServices(ctx context.Context, p Plan, m netmode.Mode) (s *svcLab, err error) {
	cfg := p.Lab
	cfg.Name = m.Name()
	cross := false
	for _, pl := range m.Placements() {
		cross = cross || pl == netmode.CrossHost
	}
	if cross && cfg.Hosts < 3 {
		cfg.Hosts = 3
	}
	l, err := lab.New(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = l.Teardown()
		}
	}()
	s = &svcLab{l: l, place: netmode.SameHost}
	p.logf("building %s for services (lab %s)", m.Name(), l.ID)
	t0 := time.Now()
	if err := prepare(ctx, l, m); err != nil {
		return nil, err
	}
	if err := svc.PrepareNodes(ctx, l); err != nil {
		return nil, err
	}
	addPod := func(h *lab.Host, name string) (*lab.Pod, error) {
		pod, err := m.AddPod(ctx, l, h, name)
		if err != nil {
			return nil, fmt.Errorf("adding pod %s: %w", name, err)
		}
		if !pod.Owned || !pod.IP.IsValid() || pod.IP == h.IP {
			return nil, fmt.Errorf("%w: %s pods share their host's address; services need pods with their own (bridge, vxlan, host-gw, ...)", errNoPodIPs, m.Name())
		}
		for _, kv := range LabSysctls {
			_ = l.Sysctl(ctx, pod.NetNS, kv[0], kv[1])
		}
		return pod, nil
	}
	if s.client, err = addPod(l.Hosts[0], "c1"); err != nil {
		return nil, err
	}
	for i := 0; i < ServiceBackends; i++ {
		h := l.Hosts[0]
		if cross {
			h = l.Hosts[1+i%(len(l.Hosts)-1)]
			s.place = netmode.CrossHost
		}
		b, err := addPod(h, fmt.Sprintf("b%d", i+1))
		if err != nil {
			return nil, err
		}
		s.backends = append(s.backends, b)
	}
	start := func(pod *lab.Pod) (*agent.Client, int, error) {
		return startAgent(ctx, p, l, pod, pod.Name, -1)
	}
	if s.cAgent, s.cPID, err = start(s.client); err != nil {
		return nil, err
	}
	for _, b := range s.backends {
		a, _, err := start(b)
		if err != nil {
			return nil, err
		}
		s.bAgents = append(s.bAgents, a)
	}
	p.logf("  %s ready in %v", m.Name(), time.Since(t0).Round(time.Millisecond))
	return s, nil
}

var errNoPodIPs = errors.New("no pod addresses")

var errUnreachable = errors.New("service unreachable")

// probeService checks, before anything is measured, that a few short
// connections through the service complete: a network and a balancer that
// cannot work together are reported in a few seconds with the reason,
// rather than as every measurement timing out.
func probeService(ctx context.Context, s *svcLab, addr netip.AddrPort) error {
	params := workload.Params{Duration: 200 * time.Millisecond, MessageSize: 16, Port: BackendPort}
	var servers []*agent.Server
	defer func() {
		for _, srv := range servers {
			_, _ = srv.Stop()
		}
	}()
	for _, a := range s.bAgents {
		srv, err := a.Serve(ctx, "tcp_crr", params)
		if err != nil {
			return err
		}
		servers = append(servers, srv)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rep, err := s.cAgent.Run(rctx, "tcp_crr", params, addr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("connections hang (replies never come back translated)")
		}
		return err
	}
	if rep.Transactions == 0 {
		return fmt.Errorf("no connection completed (%d failed)", rep.Errors)
	}
	return nil
}

// ServiceList is n services with every backend as an endpoint; the last
// one is the measured one. With udp every service also has a UDP port of
// the same number beside its TCP one (a second entry of the same name),
// as a Kubernetes Service with two ports.
func ServiceList(n int, backends []*lab.Pod, udp bool) ([]svc.Service, error) {
	var eps []svc.Endpoint
	for _, b := range backends {
		eps = append(eps, svc.Endpoint{Pod: b.Name, Host: b.Host.Index, IP: b.IP, Port: BackendPort})
	}
	out := make([]svc.Service, 0, n)
	for i := 0; i < n; i++ {
		vip, err := svc.VIP(i)
		if err != nil {
			return nil, err
		}
		s := svc.Service{Name: fmt.Sprintf("svc-%d", i), VIP: vip, Port: ServicePort, Proto: "tcp", Endpoints: eps}
		out = append(out, s)
		if udp {
			s.Proto = "udp"
			out = append(out, s)
		}
	}
	return out, nil
}

func runServices(ctx context.Context, p Plan, m netmode.Mode, run *result.Run) error {
	counts := p.Services
	if len(counts) == 0 {
		counts = []int{1}
	}
	first := len(run.Results)
	defer func() { Compare(run.Results[first:]) }()
	// A fresh lab for every load balancer and scale step: what one leaves
	// behind (the backends' TIME_WAIT sockets, the nodes' conntrack
	// entries, netfilter tables that keep conntrack on) would otherwise
	// slow the next one, and a Kubernetes cluster runs one of them anyway.
	inLab := func(f func(s *svcLab) error) (err error) {
		s, err := buildServices(ctx, p, m)
		if err != nil {
			return err
		}
		defer func() {
			if terr := s.l.Teardown(); terr != nil && err == nil {
				err = fmt.Errorf("teardown: %w", terr)
			}
		}()
		if run.Environment.Offloads == nil {
			captureLabEnv(ctx, s.l, run)
		}
		return f(s)
	}
	for _, name := range p.LBs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if name == svc.None {
			err = inLab(func(s *svcLab) error {
				addr := netip.AddrPortFrom(s.backends[0].IP, BackendPort)
				runServiceWorkloads(ctx, p, m, s, run, name, 0, 0, addr, fmt.Sprintf("pod %s %s", s.backends[0].Name, addr))
				return nil
			})
		} else if lb, _ := svc.New(name); svc.Check(lb) != nil {
			cerr := svc.Check(lb)
			p.logf("skip %s lb=%s: %v", m.Name(), name, cerr)
			run.Skipped = append(run.Skipped, result.Skip{Network: m.Name() + " lb=" + name, Reason: cerr.Error()})
			continue
		} else {
			for _, n := range counts {
				if err = inLab(func(s *svcLab) error { return runLBStep(ctx, p, m, s, run, name, n) }); err != nil {
					break
				}
			}
		}
		if errors.Is(err, errNoPodIPs) {
			p.logf("skip %s: %v", m.Name(), err)
			run.Skipped = append(run.Skipped, result.Skip{Network: m.Name(), Reason: err.Error()})
			return nil
		}
		if errors.Is(err, svc.ErrUnsupported) || errors.Is(err, errUnreachable) {
			p.logf("skip %s lb=%s: %v", m.Name(), name, err)
			run.Skipped = append(run.Skipped, result.Skip{Network: m.Name() + " lb=" + name, Reason: err.Error()})
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runLBStep programs n services with a fresh instance of load balancer
// name, records how long that took, and runs the workloads against the
// last service.
func runLBStep(ctx context.Context, p Plan, m netmode.Mode, s *svcLab, run *result.Run, name string, n int) (err error) {
	lb, err := svc.New(name)
	if err != nil {
		return err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if terr := lb.Teardown(tctx); terr != nil && err == nil {
			err = fmt.Errorf("%s teardown: %w", name, terr)
		}
	}()
	list, err := ServiceList(n, s.backends, p.needsUDP())
	if err != nil {
		return err
	}
	cluster := &svc.Cluster{Lab: s.l, Clients: []svc.Client{{Pod: s.client, PIDs: []int{s.cPID}}}}
	t0 := time.Now()
	if err := lb.Sync(ctx, cluster, list); err != nil {
		if errors.Is(err, svc.ErrUnsupported) {
			return err
		}
		return fmt.Errorf("programming %d services with %s: %w", n, name, err)
	}
	sync := time.Since(t0)
	p.logf("  %-10s lb=%-11s services=%-5d programmed in %v", m.Name(), name, n, sync.Round(time.Millisecond))
	target := list[len(list)-1]
	if err := probeService(ctx, s, target.Addr()); err != nil {
		return fmt.Errorf("%w: %s cannot reach its service through %s: %v; the network may bypass the node's stack or give pods no route to %s (as macvlan and the ebpf datapath do)",
			errUnreachable, m.Name(), name, err, svc.ServiceCIDR)
	}
	runServiceWorkloads(ctx, p, m, s, run, name, n, sync, target.Addr(), "service "+target.Name+" "+target.Addr().String())
	return ctx.Err()
}

// runServiceWorkloads runs every workload (each step of a multi-step one;
// http_qps both with short and keep-alive connections unless --keepalive
// chose one) against addr.
func runServiceWorkloads(ctx context.Context, p Plan, m netmode.Mode, s *svcLab, run *result.Run, lbName string, n int, sync time.Duration, addr netip.AddrPort, path string) {
	for _, wname := range p.Workloads {
		w, err := workload.Get(wname)
		if err != nil {
			continue
		}
		variants := []map[string]string{nil}
		if wname == "http_qps" && p.Params.Extra["keepalive"] == "" {
			variants = []map[string]string{{"keepalive": "false"}, {"keepalive": "true"}}
		}
		for _, set := range variants {
			for rep := 0; rep < p.Repeat; rep++ {
				base := p.Params
				base.Extra = cloneExtra(p.Params.Extra, set)
				w.Defaults(&base)
				err := eachStep(ctx, w, base, func(params *workload.Params, label string) result.Result {
					params.Port = BackendPort
					res := measureService(ctx, w, s, *params, addr)
					if ctx.Err() != nil {
						return res
					}
					res.Network, res.Placement, res.LB, res.Services = m.Name(), string(s.place), lbName, n
					res.Path = path
					res.Step = serviceStep(n, set, label)
					res.Params["backends"] = len(s.backends)
					if n > 0 {
						res.Params["services"] = n
						if res.Metrics.Extra == nil {
							res.Metrics.Extra = map[string]float64{}
						}
						res.Metrics.Extra["sync_s"] = sync.Seconds()
					}
					name := wname
					if res.Step != "" {
						name += " " + res.Step
					}
					if res.Error != "" {
						p.logf("  %-10s lb=%-11s %s error: %s", m.Name(), lbName, name, res.Error)
					} else {
						p.logf("  %-10s lb=%-11s %s %s", m.Name(), lbName, name, brief(res.Metrics))
					}
					run.Results = append(run.Results, res)
					return res
				})
				if err != nil {
					return
				}
			}
		}
	}
}

func serviceStep(n int, set map[string]string, label string) string {
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("services=%d", n))
	}
	if v := set["keepalive"]; v != "" {
		parts = append(parts, "keepalive="+v)
	}
	if label != "" {
		parts = append(parts, label)
	}
	return strings.Join(parts, " ")
}

func cloneExtra(a, b map[string]string) map[string]string {
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

// measureService serves on every backend, runs the client against addr and
// merges the servers' reports.
func measureService(ctx context.Context, w workload.Workload, s *svcLab, params workload.Params, addr netip.AddrPort) result.Result {
	res := result.Result{
		Workload: w.Name(),
		Params:   map[string]any{"duration_s": params.Duration.Seconds(), "message_size": params.MessageSize, "underlay_mtu": s.l.Cfg.MTU},
	}
	for k, v := range params.Extra {
		res.Params[k] = v
	}
	var servers []*agent.Server
	stopAll := func() ([]workload.Report, error) {
		var reps []workload.Report
		var errs []error
		for _, srv := range servers {
			r, err := srv.Stop()
			reps = append(reps, r)
			errs = append(errs, err)
		}
		servers = nil
		return reps, errors.Join(errs...)
	}
	for i, a := range s.bAgents {
		srv, err := a.Serve(ctx, w.Name(), params)
		if err != nil {
			_, _ = stopAll()
			res.Error = fmt.Sprintf("server on %s: %v", s.backends[i].Name, err)
			return res
		}
		servers = append(servers, srv)
	}
	rctx, cancel := context.WithTimeout(ctx, params.Duration+30*time.Second)
	crep, cerr := s.cAgent.Run(rctx, w.Name(), params, addr)
	cancel()
	sreps, serr := stopAll()
	if cerr != nil {
		res.Error = "client: " + cerr.Error()
		return res
	}
	if serr != nil {
		res.Error = "server: " + serr.Error()
		return res
	}
	mt, h, err := w.Metrics(params, crep, MergeReports(sreps))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if crep.Seconds > 0 {
		mt.ClientCPUSPerS = result.F(crep.CPUSeconds / params.Duration.Seconds())
	}
	var scpu float64
	for _, r := range sreps {
		scpu += r.CPUSeconds
	}
	if scpu > 0 {
		mt.ServerCPUSPerS = result.F(scpu / params.Duration.Seconds())
	}
	res.Metrics, res.Histogram = mt, h
	return res
}

// MergeReports adds up the server halves of several backends: counts and
// CPU add, the window is the longest, histograms merge exactly.
func MergeReports(reps []workload.Report) workload.Report {
	var out workload.Report
	var h *hist.H
	for _, r := range reps {
		out.Bytes += r.Bytes
		out.Messages += r.Messages
		out.Transactions += r.Transactions
		out.Errors += r.Errors
		out.CPUSeconds += r.CPUSeconds
		if r.Seconds > out.Seconds {
			out.Seconds = r.Seconds
		}
		for k, v := range r.Extra {
			if out.Extra == nil {
				out.Extra = map[string]float64{}
			}
			out.Extra[k] += v
		}
		if r.Histogram != "" {
			if x, err := hist.Decode(r.Histogram); err == nil {
				if h == nil {
					h = x
				} else {
					h.Merge(x)
				}
			}
		}
	}
	if h != nil {
		out.Histogram, _ = h.Encode()
	}
	return out
}

// Compare adds the study's figures to service results: each rate's %
// difference to iptables and to ipvs measured on the same network, number
// of services and workload step (the reference, lb none, compares with the
// smallest service count).
func Compare(results []result.Result) {
	type key struct{ network, workload, kind string }
	kindOf := func(r result.Result) string {
		k, _ := r.Params["keepalive"].(string)
		return k
	}
	ref := map[string]map[key]map[int]float64{"iptables": {}, "ipvs": {}}
	for _, r := range results {
		if r.Error != "" || r.Metrics.TransactionsPerS == nil {
			continue
		}
		if m, ok := ref[r.LB]; ok {
			k := key{r.Network, r.Workload, kindOf(r)}
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
			byN := m[key{r.Network, r.Workload, kindOf(*r)}]
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
				r.Metrics.Extra["vs_"+name+"_pct"] = 100 * (*r.Metrics.TransactionsPerS/b - 1)
			}
		}
	}
}
