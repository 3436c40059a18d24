package kubernetes

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/svc"
)

// ServicePort is the services' port; BackendPort the pods' (targetPort),
// as in the lab.
const (
	ServicePort = 80
	BackendPort = 8080
)

// createWorkers bounds the Service creations in flight.
const createWorkers = 16

// ServesLB implements backend.LBServer: the cluster's own proxy, and the
// pod IP.
func (b *Backend) ServesLB(lb string) bool { return lb == svc.ClusterProxy || lb == svc.None }

// SharedServices implements backend.SharedServices: the cluster's proxy
// programs the Services of every namespace, so the deployments of one
// service count must be gone before another's are made.
func (b *Backend) SharedServices() bool { return true }

// ProgramServices implements backend.ServiceHost for lb "cluster": n
// ClusterIP Services selecting the backend pods (labelled for it now), the
// measured one created last; the cluster's own proxy programs them. Sync
// runs from the first creation until a probe through the measured
// service's ClusterIP gets answers: the API server, the EndpointSlice
// controller and the proxy on the client's node, together. The Services
// go with the namespace.
func (d *Deployment) ProgramServices(ctx context.Context, lb string, n int, udp bool, client string, backends []string) (set backend.ServiceSet, clean func() error, err error) {
	if lb != svc.ClusterProxy {
		return set, nil, backend.Skip(fmt.Sprintf("lb %s is one of cnperf's replicas (--backend lab); on kubernetes the cluster's own proxy serves Services: use --lb %s", lb, svc.ClusterProxy))
	}
	if d.kind.hostNetwork {
		return set, nil, backend.Skip(d.NetworkName + " pods share their node's address: services need a pod network")
	}
	if d.Pods[client] == nil {
		return set, nil, fmt.Errorf("no pod %q", client)
	}
	for _, name := range backends {
		p := d.Pods[name]
		if p == nil {
			return set, nil, fmt.Errorf("no pod %q", name)
		}
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"1"}}}`, LabelBackend)
		if _, err := d.cl.Core.Pods(d.ns).Patch(ctx, p.kp.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return set, nil, d.cl.explain(err, "label pod "+p.kp.name)
		}
	}
	d.mu.Lock()
	d.services += n
	d.mu.Unlock()
	t0 := time.Now()
	if n > 1 {
		if err := d.createServices(ctx, 0, n-1, udp); err != nil {
			return set, nil, err
		}
	}
	last, err := d.cl.Core.Services(d.ns).Create(ctx, d.serviceObject(n-1, udp), metav1.CreateOptions{})
	if err != nil {
		return set, nil, d.cl.explain(err, "create service")
	}
	vip, err := netip.ParseAddr(last.Spec.ClusterIP)
	if err != nil {
		return set, nil, fmt.Errorf("service %s got no ClusterIP (%q)", last.Name, last.Spec.ClusterIP)
	}
	set.Target = netip.AddrPortFrom(vip, ServicePort)
	set.Path = "service " + last.Name + " " + set.Target.String() + " (the cluster's proxy)"
	set.Count = n
	probe := d.b.probe
	if probe == nil {
		probe = probeUntil
	}
	if err := probe(ctx, d, client, backends, &set); err != nil {
		return set, nil, err
	}
	set.Sync = time.Since(t0)
	d.b.logf("  %-10s lb=%-11s services=%-5d answering after %v", d.NetworkName, lb, n, set.Sync.Round(time.Millisecond))
	return set, nil, nil
}

// createServices creates services [from, to) with a few requests in flight.
func (d *Deployment) createServices(ctx context.Context, from, to int, udp bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	// one at a time for a few (in a reproducible order), more for many
	for w := 0; w < min(createWorkers, 1+(to-from)/64); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := d.cl.Core.Services(d.ns).Create(ctx, d.serviceObject(i, udp), metav1.CreateOptions{}); err != nil {
					mu.Lock()
					if first == nil {
						first = d.cl.explain(err, fmt.Sprintf("create service svc-%d", i))
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := from; i < to && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

func (d *Deployment) serviceObject(i int, udp bool) *corev1.Service {
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: d.ns, Labels: d.labels()},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelBackend: "1"},
			Ports:    []corev1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: ServicePort, TargetPort: intstr.FromInt32(BackendPort)}},
		},
	}
	if udp {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "udp", Protocol: corev1.ProtocolUDP, Port: ServicePort, TargetPort: intstr.FromInt32(BackendPort)})
	}
	return s
}

// probeUntil probes the measured service until a few short connections
// through it complete (the endpoints known and the proxy programmed), for
// at most a minute plus 20 ms per service.
func probeUntil(ctx context.Context, d *Deployment, client string, backends []string, set *backend.ServiceSet) error {
	limit := time.Minute + time.Duration(set.Count)*20*time.Millisecond
	deadline := time.Now().Add(limit)
	var bagents []*agent.Client
	for _, b := range backends {
		bagents = append(bagents, d.Pods[b].Agent)
	}
	for {
		err := backend.ProbeService(ctx, d.Pods[client].Agent, bagents, set.Target, BackendPort, "connections hang")
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("service %s does not answer after %v: %v; is the cluster's proxy (kube-proxy) running on node %s?", set.Target, limit.Round(time.Second), err, d.Pods[client].kp.node)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
