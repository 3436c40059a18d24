// Package none is Docker's --net=none: a namespace with loopback only.
package none

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is the loopback-only network.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "none" }

// Summary implements netmode.Mode.
func (Mode) Summary() string { return "loopback only (docker --net=none); same-pod tests only" }

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement { return []ground.Placement{ground.SamePod} }

// Refuse implements netmode.Refuser.
func (Mode) Refuse(ground.Placement) string {
	return "none gives a pod loopback only, so no other pod can reach it; use --placement same-pod"
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements { return netmode.Requirements{Commands: []string{"ip"}} }

// Setup implements netmode.Mode.
func (Mode) Setup(context.Context, *lab.Lab) error { return nil }

// AddPod implements netmode.Mode: a namespace with nothing but lo.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return l.NewPodNS(ctx, h, name)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	if from.NetNS != to.NetNS {
		return netip.AddrPort{}, fmt.Errorf("none: pod %s is unreachable from another pod", to.Name)
	}
	return podnet.Direct(from, to, port)
}
