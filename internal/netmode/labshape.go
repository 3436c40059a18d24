package netmode

import "github.com/cnperf/cnperf/internal/lab"

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
