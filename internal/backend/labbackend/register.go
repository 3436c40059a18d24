package labbackend

import (
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/lab"
)

func init() {
	backend.Register(backend.Info{
		Name:    Name,
		Summary: "network namespaces cnperf builds",
		Rank:    0, // the default
		RootFor: " to create network namespaces",
		Caps:    []backend.Capability{backend.BuildsHere, backend.LabNetworks, backend.Tuning, backend.LocalLabs},
		New: func(c backend.Config) backend.Backend {
			return New(c.Lab, c.Agent, c.Logf)
		},
		Cleaner:      cleanup.Labs{},
		CleanSummary: "namespaces, processes, cgroups, state folders; also docker-lab's engines, which live in them",
	})
}

// LocalLab implements backend.LocalLab.
func (d *Deployment) LocalLab() *lab.Lab { return d.Lab }
