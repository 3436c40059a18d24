// Package ebpftc is the load balancer of the study in seeds/003 (Tencent
// TKE with Cilium): a tc program on the client pod's own eth0 DNATs
// packets to a service on egress and reverse-DNATs the replies on ingress,
// with a conntrack-like map (ct_fwd, ct_rev) remembering each connection's
// backend, so service traffic never passes the node's netfilter. A pod that
// reaches a service whose chosen backend is itself (self-access) is
// redirected to its own loopback, where the same ingress program, attached
// to lo, reverses the replies. Programs are attached with TCX inside each
// client pod's namespace; one copy per pod (its own address is a load-time
// constant), all sharing the service, backend and conntrack maps.
package ebpftc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/svc/bpfmaps"
)

func init() { svc.Register(func() svc.LB { return &LB{} }) }

// LB is the tc load balancer.
type LB struct {
	mu      sync.Mutex
	maps    map[string]*ebpf.Map
	progs   []*tcPrograms
	links   []link.Link
	keys    map[bpfmaps.SvcKey]bool
	progIDs []int
	pods    map[string]bool // namespaces with programs attached
}

// Name implements svc.LB.
func (*LB) Name() string { return "ebpf-tc" }

// Replicates implements result.Replicator: Cilium's service load balancing in its tc programs (kube-proxy replacement without socket LB), as a cluster
// running it records it.
func (*LB) Replicates() string { return "cilium tc-lb" }

// Summary implements svc.LB.
func (*LB) Summary() string {
	return "the study's eBPF LB: tc DNAT on the pod's eth0 egress, reverse DNAT on ingress, self-access via loopback"
}

// Options implements svc.LB: it takes none.
func (*LB) Options() []option.Spec { return nil }

// Requires implements svc.LB.
func (*LB) Requires() svc.Requirements {
	return svc.Requirements{
		Kernel: []netmode.KernelFeature{
			{Config: "CONFIG_BPF_SYSCALL", What: "eBPF"},
			{Config: "CONFIG_NET_XGRESS", What: "TCX eBPF attachment (kernel 6.6+)"},
		},
	}
}

// ProgramIDs are the kernel ids of the loaded programs, for leak checks.
func (lb *LB) ProgramIDs() []int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]int(nil), lb.progIDs...)
}

// Sync implements svc.LB: attach to client pods not yet attached, then
// rewrite the service maps.
func (lb *LB) Sync(ctx context.Context, c *svc.Cluster, services []svc.Service) error {
	if err := svc.Validate(services); err != nil {
		return err
	}
	if err := svc.Check(lb); err != nil {
		return err
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	spec, err := loadTc()
	if err != nil {
		return fmt.Errorf("reading the tc LB objects: %w", err)
	}
	if lb.maps == nil {
		lb.maps = map[string]*ebpf.Map{}
		for _, name := range []string{"services", "backends", "ct_fwd", "ct_rev"} {
			m, err := ebpf.NewMap(spec.Maps[name])
			if err != nil {
				lb.teardownLocked()
				return fmt.Errorf("creating map %s: %w", name, err)
			}
			lb.maps[name] = m
		}
		lb.pods = map[string]bool{}
	}
	for _, cl := range c.Clients {
		if lb.pods[cl.Pod.NetNS] {
			continue
		}
		if cl.Pod.Dev == "" || !cl.Pod.IP.Is4() {
			return fmt.Errorf("ebpf-tc attaches to a pod's own interface; pod %s has none (use a network that gives pods an eth0)", cl.Pod.Name)
		}
		// Self-access arrives on lo from the pod's own address, which the
		// kernel calls a martian source unless lo accepts local sources.
		if err := c.Lab.Sysctl(ctx, cl.Pod.NetNS, "net.ipv4.conf.lo.accept_local", "1"); err != nil {
			return fmt.Errorf("pod %s: %w", cl.Pod.Name, err)
		}
		if err := lb.attach(spec, cl); err != nil {
			return fmt.Errorf("attaching to pod %s: %w", cl.Pod.Name, err)
		}
		lb.pods[cl.Pod.NetNS] = true
	}
	keys, err := bpfmaps.Fill(lb.maps["services"], lb.maps["backends"], services, lb.keys)
	lb.keys = keys
	return err
}

func (lb *LB) attach(spec *ebpf.CollectionSpec, cl svc.Client) error {
	return lab.InNetNS(cl.Pod.NetNS, func() error {
		dev, err := net.InterfaceByName(cl.Pod.Dev)
		if err != nil {
			return err
		}
		lo, err := net.InterfaceByName("lo")
		if err != nil {
			return err
		}
		s := spec.Copy()
		if err := s.Variables["self_ip"].Set(bpfmaps.IP4(cl.Pod.IP.As4())); err != nil {
			return err
		}
		if err := s.Variables["lo_ifindex"].Set(uint32(lo.Index)); err != nil {
			return err
		}
		progs := &tcPrograms{}
		if err := s.LoadAndAssign(progs, &ebpf.CollectionOptions{MapReplacements: lb.maps}); err != nil {
			return fmt.Errorf("loading the tc LB programs: %w", err)
		}
		lb.progs = append(lb.progs, progs)
		for _, p := range []*ebpf.Program{progs.CnperfTcEgress, progs.CnperfTcIngress} {
			if info, err := p.Info(); err == nil {
				if id, ok := info.ID(); ok {
					lb.progIDs = append(lb.progIDs, int(id))
				}
			}
		}
		for _, a := range []struct {
			ifindex int
			p       *ebpf.Program
			t       ebpf.AttachType
		}{
			{dev.Index, progs.CnperfTcEgress, ebpf.AttachTCXEgress},
			{dev.Index, progs.CnperfTcIngress, ebpf.AttachTCXIngress},
			{lo.Index, progs.CnperfTcIngress, ebpf.AttachTCXIngress},
		} {
			l, err := link.AttachTCX(link.TCXOptions{Interface: a.ifindex, Program: a.p, Attach: a.t})
			if err != nil {
				if errors.Is(err, ebpf.ErrNotSupported) {
					return svc.Unsupported("ebpf-tc needs TCX attachment (kernel 6.6+); this kernel lacks it")
				}
				return fmt.Errorf("attaching %s: %w", a.p, err)
			}
			lb.links = append(lb.links, l)
		}
		return nil
	})
}

// Teardown implements svc.LB: detaching closes the links; closing the
// programs and maps frees them and the conntrack-like entries with them.
func (lb *LB) Teardown(context.Context) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.teardownLocked()
}

func (lb *LB) teardownLocked() error {
	var errs []error
	for _, l := range lb.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	lb.links = nil
	for _, p := range lb.progs {
		if err := p.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	lb.progs = nil
	for _, m := range lb.maps {
		if err := m.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	lb.maps, lb.keys, lb.pods = nil, nil, nil
	return errors.Join(errs...)
}
