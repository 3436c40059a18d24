package dockerlab

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
)

// startupProbeLimit bounds the wait for a new container's first reply (an
// overlay endpoint has taken over 10 s on this shared machine).
const startupProbeLimit = time.Minute

// StartPod implements backend.PodStarter: on the engine of pod near's
// host it times `docker run --network none` (create and start, the
// reference), then a container on the deployment's network, from the
// create call to the first ICMP echo reply from pod peer's address (its
// container's on bridge and the overlay, its host's for host and nat),
// sent from inside the new container's namespace. Phases: docker_create,
// docker_start, first_packet (on the overlay this last one holds the
// gossip that tells the peer's host where the new endpoint is). Both
// containers are removed again.
func (d *Deployment) StartPod(ctx context.Context, near, peer, name string) (backend.StartupSample, error) {
	var s backend.StartupSample
	np := d.Pods[near]
	if np == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	en := np.en
	run := func(pname, mode string) (id string, created, started time.Time, err error) {
		return en.e.TimedRun(ctx, "cnperf-"+d.run+"-"+d.id+"-"+pname, d.containerConfig(np, pname, mode))
	}
	rm := func(id string) { en.e.RemoveWithin(id, time.Minute) }
	t := time.Now()
	bare, _, started, err := run("n"+name, "none")
	defer rm(bare)
	if err != nil {
		return s, fmt.Errorf("container with no network: %w", err)
	}
	s.Bare = started.Sub(t)

	t0 := time.Now()
	id, created, started, err := run("u"+name, d.networkMode())
	defer rm(id)
	if err != nil {
		return s, fmt.Errorf("creating container: %w", err)
	}
	s.Phases = map[string]time.Duration{"docker_create": created.Sub(t0), "docker_start": started.Sub(created)}
	var ns string
	var dst netip.Addr
	if pp := d.Pods[peer]; peer != "" && pp != nil {
		if ns, err = en.e.NetNSPath(ctx, id); err != nil {
			return s, err
		}
		if dst = pp.IP; d.kind.publish {
			dst = pp.en.host.IP
		}
		if !dst.Is4() {
			dst = netip.MustParseAddr("127.0.0.1")
		}
	}
	return s, s.FirstReply(ctx, ns, dst, t0, started, startupProbeLimit)
}

// SetupPhases implements backend.PodStarter: what the cluster went
// through once: the slowest engine's start, the agent image's import,
// the swarm's init and the slowest join.
func (d *Deployment) SetupPhases() map[string]time.Duration {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	out := map[string]time.Duration{}
	for k, v := range d.c.phases {
		if d.kind.mode != modeOverlay && (k == "swarm_init" || k == "swarm_join") {
			continue
		}
		out[k] = v
	}
	return out
}
