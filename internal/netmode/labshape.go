package netmode

import (
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode/cni"
)

// LabShaper is implemented by modes that need a particular lab, such as
// cloud-routed's routed underlay. The runner calls ShapeLab on the lab's
// configuration before building it.
type LabShaper interface {
	ShapeLab(cfg *lab.Config)
}

// ShapeLab lets m adjust cfg, if m wants to.
func ShapeLab(m Mode, cfg *lab.Config) {
	if s, ok := m.(LabShaper); ok {
		s.ShapeLab(cfg)
	}
}

// SetupPhaser is implemented by modes whose Setup has a phase worth
// reporting beside the per-pod start-up, such as calico-bgp's
// "bgp_convergence" (BIRD sessions established): how long each took on lab l.
type SetupPhaser interface {
	SetupPhases(l *lab.Lab) map[string]time.Duration
}

// CNIReferencer is implemented by modes that a real CNI plugin of Debian's
// containernetworking-plugins builds the same way (CNI bridge for Docker's
// and Flannel's bridges, macvlan, ptp for Calico's routed veths): the
// start-up experiment's startup_cni times that plugin's ADD for a pod on
// the same lab host, beside the mode's own AddPod.
type CNIReferencer interface {
	CNIReference(l *lab.Lab, h *lab.Host) cni.Reference
}
