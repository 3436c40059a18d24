// Package bridge is Docker's default network: a docker0-like bridge on the
// host holding the pod subnet's gateway, and a veth per container. It is a
// single-host network: containers on other hosts are reached through NAT.
package bridge

import (
	"context"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/netmode/cni"
	"github.com/cnperf/cnperf/internal/netmode/podnet"
	"github.com/cnperf/cnperf/internal/option"
)

// BridgeName is the host bridge, named as Docker names it.
const BridgeName = "docker0"

func init() { netmode.Register(func() netmode.Mode { return Mode{} }) }

// Mode is Docker's bridge network.
type Mode struct{}

// Name implements netmode.Mode.
func (Mode) Name() string { return "bridge" }

// Summary implements netmode.Mode.
func (Mode) Summary() string {
	return "Docker's default: docker0 bridge and a veth per pod, single host"
}

// Placements implements netmode.Mode.
func (Mode) Placements() []ground.Placement { return []ground.Placement{ground.SameHost} }

// Refuse implements netmode.Refuser.
func (Mode) Refuse(p ground.Placement) string {
	if p == ground.CrossHost {
		return "bridge is a single-host network: a pod cannot reach a pod on another host through it; use nat (Docker -p), vxlan or host-gw for cross-host"
	}
	return ""
}

// Options implements netmode.Mode: none of its own.
func (Mode) Options() []option.Spec { return nil }

// Requires implements netmode.Mode.
func (Mode) Requires() netmode.Requirements {
	return netmode.Requirements{
		Kernel:   []netmode.KernelFeature{{Config: "CONFIG_BRIDGE", What: "Linux bridge"}, {Config: "CONFIG_VETH", What: "veth pairs"}},
		Commands: []string{"ip"},
	}
}

// Setup implements netmode.Mode: docker0 on every host.
func (Mode) Setup(ctx context.Context, l *lab.Lab) error {
	for _, h := range l.Hosts {
		if err := podnet.EnsureBridge(ctx, l, h, BridgeName, l.Cfg.MTU); err != nil {
			return err
		}
	}
	return nil
}

// AddPod implements netmode.Mode.
func (Mode) AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error) {
	return podnet.AttachPod(ctx, l, h, name, BridgeName, l.Cfg.MTU)
}

// Expose implements netmode.Mode.
func (Mode) Expose(_ context.Context, _ *lab.Lab, from, to *lab.Pod, _ string, port int) (netip.AddrPort, error) {
	return podnet.Direct(from, to, port)
}

// CNIReference implements netmode.CNIReferencer: the CNI bridge plugin on
// docker0, the pod's default route via the bridge's address.
func (Mode) CNIReference(l *lab.Lab, _ *lab.Host) cni.Reference {
	return cni.Reference{Type: "bridge", Routes: []string{"0.0.0.0/0"},
		Fields: map[string]any{"bridge": BridgeName, "isGateway": true, "mtu": l.Cfg.MTU}}
}
