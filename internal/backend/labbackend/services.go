package labbackend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/svc"
	_ "github.com/cnperf/cnperf/internal/svc/all" // the load balancers
)

// ServicePort is the services' port; BackendPort the pods' (targetPort).
const (
	ServicePort = 80
	BackendPort = 8080
)

func prepareServiceNodes(ctx context.Context, l *lab.Lab) error { return svc.PrepareNodes(ctx, l) }

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

// ServesLB implements backend.LBServer: cnperf's replicas and the pod IP,
// not a cluster's own proxy.
func (b *Backend) ServesLB(lb string) bool { return lb != svc.ClusterProxy }

// ProgramServices implements backend.ServiceHost: n services (the measured
// one last, so it sits at the end of any linear rule list, like a service
// created after the others) programmed by a fresh instance of load
// balancer lbName, then a probe that a few connections get through. A load
// balancer this machine lacks, or one that cannot reach its service on
// this network, is a skip with the reason.
func (d *Deployment) ProgramServices(ctx context.Context, lbName string, n int, udp bool, client string, backends []string) (set backend.ServiceSet, clean func() error, err error) {
	lb, err := svc.New(lbName)
	if err != nil {
		return set, nil, err
	}
	if cerr := svc.Check(lb); cerr != nil {
		return set, nil, backend.Skip(cerr.Error())
	}
	clean = func() error {
		tctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if terr := lb.Teardown(tctx); terr != nil {
			return fmt.Errorf("%s teardown: %w", lbName, terr)
		}
		return nil
	}
	teardown := clean // the error returns below set clean to nil
	defer func() {
		if err != nil {
			_ = teardown()
			clean = nil
		}
	}()
	c := d.pods[client]
	var bpods []*lab.Pod
	var bagents []*agent.Client
	for _, name := range backends {
		p := d.pods[name]
		if p == nil || c == nil {
			return set, nil, fmt.Errorf("no pod %q or %q", client, name)
		}
		bpods = append(bpods, p.lp)
		bagents = append(bagents, p.Agent)
	}
	list, err := ServiceList(n, bpods, udp)
	if err != nil {
		return set, nil, err
	}
	cluster := &svc.Cluster{Lab: d.Lab, Clients: []svc.Client{{Pod: c.lp, PIDs: []int{c.PID}}}}
	t0 := time.Now()
	if err := lb.Sync(ctx, cluster, list); err != nil {
		if ctx.Err() != nil {
			return set, nil, ctx.Err()
		}
		if errors.Is(err, svc.ErrUnsupported) {
			return set, nil, backend.Skip(err.Error())
		}
		return set, nil, fmt.Errorf("programming %d services with %s: %w", n, lbName, err)
	}
	set.Sync = time.Since(t0)
	set.Count = n
	target := list[len(list)-1]
	set.Target = target.Addr()
	set.Path = "service " + target.Name + " " + target.Addr().String()
	d.b.logf("  %-10s lb=%-11s services=%-5d programmed in %v", d.Mode.Name(), lbName, n, set.Sync.Round(time.Millisecond))
	if err := backend.ProbeService(ctx, c.Agent, bagents, set.Target, BackendPort, "connections hang (replies never come back translated)"); err != nil {
		if ctx.Err() != nil {
			return set, nil, ctx.Err() // an interrupt is never a skip
		}
		return set, nil, backend.Skip(fmt.Sprintf("service unreachable: %s cannot reach its service through %s: %v; the network may bypass the node's stack or give pods no route to %s (as macvlan and the ebpf datapath do)",
			d.Mode.Name(), lbName, err, svc.ServiceCIDR))
	}
	return set, clean, nil
}
