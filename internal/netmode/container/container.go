// Package container is Docker's --net=container:X, the Kubernetes pod model:
// several containers share one network namespace (which is itself on a
// bridge) and talk to each other over its loopback.
package container

import (
	"context"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/bridge"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is the shared-namespace network.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "container" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "containers sharing one pod's namespace (docker --net=container, a Kubernetes pod)"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement { return []ground.Placement{ground.SamePod} }

// Refuse implements netmode.Refuser.
func (Mode) Refuse(ground.Placement) string {
	return "container mode measures two containers inside one pod; use --placement same-pod (pods on other hosts or pods are another network's job)"
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements { return bridge.Mode{}.Requires() }

// Setup implements netmode.Mode: the pod itself sits on docker0.
func (Mode) Setup(ctx context.Context, l *lab.Lab) error { return bridge.Mode{}.Setup(ctx, l) }

// AddPod implements netmode.Mode.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, bridge.BridgeName, l.Cfg.MTU)
}

// Expose implements netmode.Mode: loopback inside the shared namespace.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
