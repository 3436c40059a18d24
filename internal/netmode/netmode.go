// Package netmode defines what a container network is to cnperf, and the
// registry of them. Each network lives in its own subpackage and registers
// a factory by name from init(); adding a network is one new folder and one
// line in netmode/all. Get makes a fresh instance each time: a deployment
// (one lab) owns its instance, and whatever the mode remembers about that
// lab lives in the instance's fields.
package netmode

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/registry"
)

// Mode is one container network, built for real in the lab.
type Mode interface {
	// Name is the registry name ("vxlan").
	Name() string
	// Summary is one line for `cnperf networks`.
	Summary() string
	// Placements the mode can do, in preference order; anything else is
	// refused with Refuse's reason.
	Placements() []ground.Placement
	// Requires lists what this machine must have.
	Requires() Requirements
	// Options declares the mode options (lab.Config.ModeOptions, `--mode-opt
	// key=value`) the mode reads, beside the Common ones every lab honours;
	// nil when it reads none.
	Options() []option.Spec
	// Setup configures the hosts (bridges, tunnels, routes) on a created lab.
	Setup(ctx context.Context, l *lab.Lab) error
	// AddPod creates a pod on host h and gives it this network.
	AddPod(ctx context.Context, l *lab.Lab, h *lab.Host, name string) (*lab.Pod, error)
	// Expose returns the address a client in pod from dials to reach port on
	// pod to (for NAT, the host's address and a mapped port it programs).
	Expose(ctx context.Context, l *lab.Lab, from, to *lab.Pod, proto string, port int) (netip.AddrPort, error)
}

// Refuser is implemented by modes that explain why a placement is impossible.
type Refuser interface {
	Refuse(p ground.Placement) string
}

// Requirements are what a mode needs from the machine.
type Requirements struct {
	Kernel   []KernelFeature // kernel options
	Commands []string        // programs on PATH
	// ControlPlane are programs on PATH needed only while the mode's
	// control plane runs: `--mode-opt controlplane=off` does without them.
	ControlPlane []string
}

// KernelFeature is a kernel option and how to probe it.
type KernelFeature struct {
	Config string // e.g. CONFIG_VXLAN
	What   string // human name, e.g. "VXLAN devices"
}

// Factory makes a fresh instance of a mode.
type Factory func() Mode

var modes = registry.New[Factory]("network", "`cnperf networks` lists them")

// Register adds a mode by its factory, under the name its instances give;
// it panics on a duplicate name (a programming error).
func Register(f func() Mode) { modes.Register(f().Name(), f) }

// Get makes a fresh instance of the named mode, or says which exist. Each
// deployment gets its own: an instance keeps the state of the lab it set
// up (daemons, KV store, BPF objects) until that lab is torn down.
func Get(name string) (Mode, error) {
	f, err := modes.Get(name)
	if err != nil {
		return nil, err
	}
	return f(), nil
}

// New is Get.
func New(name string) (Mode, error) { return Get(name) }

// Names lists registered modes, sorted.
func Names() []string { return modes.Names() }

// Allows reports whether m can do placement p, and if not, why.
func Allows(m Mode, p ground.Placement) (bool, string) {
	for _, q := range m.Placements() {
		if q == p {
			return true, ""
		}
	}
	if r, ok := m.(Refuser); ok {
		if why := r.Refuse(p); why != "" {
			return false, why
		}
	}
	return false, fmt.Sprintf("%s supports only %s", m.Name(), ground.JoinPlacements(m.Placements()))
}

// Traits are what a network demands of the infrastructure and offers
// beyond moving packets; `cnperf recommend --constraint` reads them. A
// mode that declares none demands nothing and offers nothing here.
type Traits struct {
	// L2Adjacency, when set, says why the hosts must share one L2 segment
	// (a route's next hop is the peer host itself).
	L2Adjacency string
	// RouteLimitOption names the mode option bounding the routes it needs
	// in a cloud's route table, one per node ("route-limit"); empty when it
	// needs none there.
	RouteLimitOption string
	// Encryption is the mode option that encrypts pod traffic between
	// hosts ("encrypt=aes-gcm"); empty when the mode cannot.
	Encryption string
}

// TraitDeclarer is implemented by modes with Traits.
type TraitDeclarer interface {
	Traits() Traits
}

// TraitsOf returns m's traits (none when it declares none).
func TraitsOf(m Mode) Traits {
	if d, ok := m.(TraitDeclarer); ok {
		return d.Traits()
	}
	return Traits{}
}
