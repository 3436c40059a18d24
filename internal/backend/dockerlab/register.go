package dockerlab

import (
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
)

func init() {
	backend.Register(backend.Info{
		Name:    Name,
		Summary: "a Docker engine per lab host, started by cnperf, a swarm overlay between them",
		Rank:    2,
		RootFor: ": the docker-lab backend builds network namespaces",
		Caps:    []backend.Capability{backend.BuildsHere},
		New: func(c backend.Config) backend.Backend {
			return New(c.Lab, c.Binary(), c.Logf)
		},
		// its engines live in a lab: its cgroups, namespaces, folder
		Cleaner:      cleanup.Labs{},
		CleanSummary: "the labs its engines live in, as for lab",
	})
}
