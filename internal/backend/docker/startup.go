package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/dockerengine"
)

// startupProbeLimit bounds the wait for a new container's first reply.
const startupProbeLimit = 30 * time.Second

// StartPod implements backend.PodStarter on a local engine: it times
// `docker run --network none` (create and start, the reference), then a
// container on the deployment's network, from the create call to the
// first ICMP echo reply from pod peer, sent from inside the new
// container's namespace. Phases: docker_create, docker_start,
// first_packet. Both containers are removed again.
func (d *Deployment) StartPod(ctx context.Context, near, peer, name string) (backend.StartupSample, error) {
	var s backend.StartupSample
	if !d.e.Local {
		return s, errors.New("start-up is timed on a local engine only (the probe enters the container's namespace)")
	}
	if d.Pods[near] == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	run := func(pod, mode string) (id string, created, started time.Time, err error) {
		cfg := dockerengine.ContainerConfig{
			Image:  d.image,
			Cmd:    []string{dockerengine.AgentPath, "agent", "--listen", "unix:" + ctlMount + "/" + pod + ".sock"},
			Labels: map[string]string{},
			HostConfig: dockerengine.HostConfig{
				NetworkMode: mode,
				Binds:       []string{d.dir + ":" + ctlMount},
			},
		}
		for k, v := range d.labels {
			cfg.Labels[k] = v
		}
		cfg.Labels["cnperf.pod"] = pod
		return d.e.TimedRun(ctx, "cnperf-"+d.id+"-"+pod, cfg)
	}
	rm := func(id string) { d.e.RemoveWithin(id, waitTimeout) }

	t := time.Now()
	bare, _, started, err := run("n"+name, "none")
	defer rm(bare)
	if err != nil {
		return s, fmt.Errorf("container with no network: %w", err)
	}
	s.Bare = started.Sub(t)

	mode := d.kind.mode
	if mode == "" {
		mode = d.netName
	}
	t0 := time.Now()
	id, created, started, err := run("u"+name, mode)
	defer rm(id)
	if err != nil {
		return s, fmt.Errorf("creating container: %w", err)
	}
	s.Phases = map[string]time.Duration{"docker_create": created.Sub(t0), "docker_start": started.Sub(created)}
	var ns string
	var dst netip.Addr
	if pp := d.Pods[peer]; peer != "" && pp != nil {
		if ns, err = d.e.NetNSPath(ctx, id); err != nil {
			return s, err
		}
		if dst = pp.IP; d.kind.mode != "" || !dst.Is4() || dst.IsUnspecified() {
			dst = netip.MustParseAddr("127.0.0.1")
		}
	}
	return s, s.FirstReply(ctx, ns, dst, t0, started, startupProbeLimit)
}

// SetupPhases implements backend.PodStarter: none on Docker.
func (d *Deployment) SetupPhases() map[string]time.Duration { return nil }
