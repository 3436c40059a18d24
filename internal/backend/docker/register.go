package docker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/dockerengine"
)

func init() {
	backend.Register(backend.Info{
		Name:    Name,
		Summary: "containers on the Docker engine at DOCKER_HOST or the current Docker context, as the docker CLI finds it",
		Rank:    1,
		RootFor: ": the docker backend keeps its agents' control sockets in /run/cnperf-docker and reads its containers' counters in /proc",
		Caps:    []backend.Capability{backend.BuildsHere},
		New: func(c backend.Config) backend.Backend {
			return New("", c.Binary(), c.Lab.ID, c.Lab.MTU, c.Logf)
		},
		Cleaner:      cleaner{},
		CleanSummary: "containers and networks labelled cnperf.run on the engine at DOCKER_HOST or the current Docker context, and agent images of other cnperf binaries",
	})
}

// cleaner removes what dead runs left on the Docker engine, by label.
type cleaner struct{}

func (cleaner) Clean(ctx context.Context, req cleanup.Request) ([]string, error) {
	e, err := dockerengine.New("")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := e.Negotiate(ctx); err != nil {
		return nil, err
	}
	keep := ""
	if self, err := os.Executable(); err == nil {
		keep, _ = dockerengine.ImageRef(self)
	}
	removed, kept, err := Clean(ctx, e, req.ID, keep, req.Force)
	for _, r := range removed {
		if r.Image != "" {
			fmt.Fprintf(req.Out, "removed agent image %s (another cnperf binary's)\n", r.Image)
			continue
		}
		fmt.Fprintf(req.Out, "removed docker run %s: %d containers, %d networks\n", r.Run, r.Containers, r.Networks)
	}
	for _, r := range kept {
		fmt.Fprintf(req.Out, "kept docker run %s: still running or started elsewhere (use --force to remove it)\n", r.Run)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(req.Out, "nothing to clean on the docker engine")
	}
	// the engine's objects hold no host state of the lab's: nothing more
	// to clean per run
	return nil, err
}
