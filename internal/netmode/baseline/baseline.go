// Package baseline is "w/o container": the workload's processes run in the
// emulated hosts' own namespaces and talk over the underlay (or, on one host,
// over loopback). Every other network is compared with it.
package baseline

import (
	"context"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is the baseline.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "baseline" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "no container network: processes in the hosts' own namespaces (loopback on one host)"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements { return netmode.Requirements{Commands: []string{"ip"}} }

// Setup implements netmode.Mode: the lab's hosts are all it needs.
func (Mode) Setup(context.Context, *lab.Lab) error { return nil }

// AddPod implements netmode.Mode: the "pod" is the host itself.
func (Mode) AddPod(_ context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return l.HostPod(h, name), nil
}

// Expose implements netmode.Mode: loopback on one host, the underlay across.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}
