package labbackend

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/cni"
)

// startupProbeLimit bounds the wait for a new pod's first reply.
const startupProbeLimit = 15 * time.Second

// StartPod implements backend.PodStarter: it creates a pod with no network
// (a namespace with loopback: the reference the paper compares with), then
// a pod on this network on the host of pod near, and times the latter from
// the create call to the first ICMP echo reply from pod peer ("" for none:
// then the figure is the pod's creation alone).
func (d *Deployment) StartPod(ctx context.Context, near, peer, name string) (backend.StartupSample, error) {
	var s backend.StartupSample
	np := d.pods[near]
	if np == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	h := np.lp.Host
	l := d.Lab
	t := time.Now()
	bare, err := l.NewPodNS(ctx, h, "n"+name)
	if err != nil {
		return s, fmt.Errorf("pod with no network: %w", err)
	}
	s.Bare = time.Since(t)
	defer func() { _ = l.DeleteNS(ctx, bare.NetNS) }()

	var marks []phaseMark
	pctx := netmode.WithPhases(ctx, func(phase string, at time.Time) {
		marks = append(marks, phaseMark{phase, at})
	})
	t0 := time.Now()
	pod, err := d.Mode.AddPod(pctx, l, h, "u"+name)
	added := time.Now()
	if err != nil {
		return s, fmt.Errorf("creating pod: %w", err)
	}
	if pod.Owned {
		// timed, the pod goes: a thousand samples need no thousand pods
		defer func() { _ = l.DeleteNS(ctx, pod.NetNS) }()
	}
	dst, err := d.peerAddr(ctx, pod, peer)
	if err != nil {
		return s, err
	}
	s.Phases = splitPhases(t0, added, marks)
	return s, s.FirstReply(ctx, pod.NetNS, dst, t0, added, startupProbeLimit)
}

// peerAddr is the address a new pod reaches pod peer at, to time its
// first reply; the zero address when there is no peer.
func (d *Deployment) peerAddr(ctx context.Context, pod *lab.Pod, peer string) (netip.Addr, error) {
	pp := d.pods[peer]
	if peer == "" || pp == nil {
		return netip.Addr{}, nil
	}
	addr, err := d.Mode.Expose(ctx, d.Lab, pod, pp.lp, "udp", 5201)
	return addr.Addr(), err
}

// StartPodCNI implements backend.CNIStarter: as StartPod, but the real CNI
// plugin of the network (netmode.CNIReferencer) wires the pod, executed as
// a container runtime executes it; its ADD is the "links" phase. Once
// timed, the plugin's DEL (timed as phase "del", not in the total) and
// the namespace's deletion undo it.
func (d *Deployment) StartPodCNI(ctx context.Context, near, peer, name string) (backend.StartupSample, error) {
	var s backend.StartupSample
	np := d.pods[near]
	if np == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	cr, ok := d.Mode.(netmode.CNIReferencer)
	if !ok {
		return s, fmt.Errorf("%s has no real CNI plugin to compare with (the CNI bridge, macvlan and ptp plugins stand for bridge, nat, host-gw, vxlan, macvlan and calico-bgp)", d.Mode.Name())
	}
	h, l := np.lp.Host, d.Lab
	ref := cr.CNIReference(l, h)
	if err := cni.Check(ref.Type); err != nil {
		return s, err
	}
	conf, err := cni.Conf(l, h, ref)
	if err != nil {
		return s, err
	}
	t0 := time.Now()
	pod, err := l.NewPodNS(ctx, h, "r"+name)
	if err != nil {
		return s, fmt.Errorf("pod for the CNI plugin: %w", err)
	}
	defer func() { _ = l.DeleteNS(ctx, pod.NetNS) }()
	t1 := time.Now()
	res, err := cni.Run(ctx, l, h, "ADD", ref.Type, pod.NetNS, pod.NetNS, conf)
	added := time.Now()
	if err != nil {
		return s, err
	}
	pod.IP, pod.Dev = res.IP, "eth0"
	dst, err := d.peerAddr(ctx, pod, peer)
	if err != nil {
		return s, err
	}
	s.Phases = map[string]time.Duration{netmode.PhaseNamespace: t1.Sub(t0), netmode.PhaseLinks: added.Sub(t1)}
	if err := s.FirstReply(ctx, pod.NetNS, dst, t0, added, startupProbeLimit); err != nil {
		return s, err
	}
	td := time.Now()
	if _, err := cni.Run(ctx, l, h, "DEL", ref.Type, pod.NetNS, pod.NetNS, conf); err != nil {
		return s, err
	}
	s.Phases["del"] = time.Since(td)
	return s, nil
}

// SetupPhases implements backend.PodStarter: node-level phases the mode's
// Setup went through once (calico-bgp: BGP sessions established).
func (d *Deployment) SetupPhases() map[string]time.Duration {
	if sp, ok := d.Mode.(netmode.SetupPhaser); ok {
		return sp.SetupPhases(d.Lab)
	}
	return nil
}

// phaseMark is one netmode.MarkPhase call.
type phaseMark struct {
	phase string
	at    time.Time
}

var standardPhases = []string{netmode.PhaseNamespace, netmode.PhaseLinks, netmode.PhaseControlPlane}

// splitPhases turns the marks of one AddPod (started at t0, returned at
// added) into the time of each phase (the first reply's is
// StartupSample.FirstReply's). Time after the last mark belongs to the standard
// phase that follows it: a mode that marks nothing spends it all in
// "links", one that marks only "namespace" spends the rest in "links"; a
// remainder under 100us stays with the last marked phase.
func splitPhases(t0, added time.Time, marks []phaseMark) map[string]time.Duration {
	out := map[string]time.Duration{}
	prev := t0
	next := 1 // index in standardPhases of the phase the remainder goes to
	for _, m := range marks {
		out[m.phase] += m.at.Sub(prev)
		prev = m.at
		switch m.phase {
		case netmode.PhaseNamespace:
			next = 1
		case netmode.PhaseLinks:
			next = 2
		default:
			next = 2 // control-plane steps a mode names itself
		}
	}
	// a remainder of a few microseconds is AddPod returning, not a phase
	switch rest := added.Sub(prev); {
	case len(marks) == 0 || rest >= 100*time.Microsecond:
		out[standardPhases[next]] += rest
	case rest > 0:
		out[marks[len(marks)-1].phase] += rest
	}
	return out
}
