// Package host is Docker's --net=host: a container shares its host's network
// namespace, so its traffic takes exactly the host's path.
package host

import (
	"context"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
)

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is host networking.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "host" }

// Summary implements netmode.Mode.
func (Mode) Summary() string { return "pods share their host's network namespace (docker --net=host)" }

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement {
	return []ground.Placement{ground.CrossHost, ground.SameHost}
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements { return netmode.Requirements{Commands: []string{"ip"}} }

// Setup implements netmode.Mode.
func (Mode) Setup(context.Context, *lab.Lab) error { return nil }

// AddPod implements netmode.Mode.
func (Mode) AddPod(_ context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return l.HostPod(h, name), nil
}

// Expose implements netmode.Mode: always the server host's own address, as a
// host-network container publishes nothing and binds the host's ports.
func (Mode) Expose(_ context.Context, _ *lab.Lab, _, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return netip.AddrPortFrom(to.Host.IP, uint16(port)), nil
}
