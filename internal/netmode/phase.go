package netmode

import (
	"context"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
)

// Start-up phases a pod goes through, in order; the startup measurement
// reports the time spent in each. A mode may mark finer ones of its own
// ("kv_registration", "bgp_convergence"); they are reported by name. The
// last, until a peer first answers, is the backend's to time
// (backend.PhaseFirstPacket).
const (
	PhaseNamespace    = "namespace"     // the pod's namespace exists
	PhaseLinks        = "links"         // its links, addresses and local routes are in place
	PhaseControlPlane = "control_plane" // the control plane has registered/announced it everywhere
)

// PhaseFunc receives the end of a phase and when it ended.
type PhaseFunc func(phase string, at time.Time)

type phaseKey struct{}

// WithPhases returns a context whose MarkPhase calls reach fn. The startup
// measurement passes such a context to AddPod; everywhere else marks cost
// one context lookup.
func WithPhases(ctx context.Context, fn PhaseFunc) context.Context {
	return context.WithValue(ctx, phaseKey{}, fn)
}

// MarkPhase records that phase has just ended, if anyone listens. Modes call
// it from AddPod at their phase boundaries; time between two marks belongs
// to the later phase.
func MarkPhase(ctx context.Context, phase string) {
	if fn, ok := ctx.Value(phaseKey{}).(PhaseFunc); ok {
		fn(phase, time.Now())
	}
}

// DaemonCPU is implemented by modes whose datapath runs in user-space
// daemons (flannel-udp, weave): their CPU time is as much the network's cost
// as the kernel's, so the runner records it next to the agents'.
type DaemonCPU interface {
	// DaemonCPUSeconds is the CPU time (user+system) the mode's daemons in
	// lab l have used so far.
	DaemonCPUSeconds(l *lab.Lab) float64
}

// NewPod is how every AddPod that gives a pod an address of its host's pod
// subnet begins: the pod's namespace (the namespace phase ends with it)
// and that address, on the eth0 the mode is to make. Equivalent to:
//
//	ip netns add POD
//
// The mode then wires eth0 (a veth, an ipvlan or macvlan sublink...).
func NewPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	pod, err := l.NewPodNS(ctx, h, name)
	if err != nil {
		return nil, err
	}
	MarkPhase(ctx, PhaseNamespace)
	ip, err := h.PodIP(name)
	if err != nil {
		return nil, err
	}
	pod.IP, pod.Dev = ip, "eth0"
	return pod, nil
}
