package dockerlab

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/lab/ping"
	"github.com/cnperf/cnperf/internal/netmode"
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
	np := d.pods[near]
	if np == nil {
		return s, fmt.Errorf("no pod %q", near)
	}
	en := np.en
	run := func(pname, mode string) (id string, created, started time.Time, err error) {
		cfg := d.containerConfig(np, pname, mode)
		id, err = en.e.CreateContainer(ctx, "cnperf-"+d.run+"-"+d.id+"-"+pname, cfg)
		created = time.Now()
		if err != nil {
			return id, created, created, err
		}
		err = en.e.StartContainer(ctx, id)
		return id, created, time.Now(), err
	}
	rm := func(id string) {
		if id != "" {
			rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = en.e.RemoveContainer(rctx, id)
			cancel()
		}
	}
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
	end := started
	if pp := d.pods[peer]; peer != "" && pp != nil {
		cj, err := en.e.InspectContainer(ctx, id)
		if err != nil {
			return s, err
		}
		dst := pp.IP
		if d.kind.publish {
			dst = pp.en.host.IP
		}
		if !dst.Is4() {
			dst = netip.MustParseAddr("127.0.0.1")
		}
		s.Path = dst.String()
		first, err := ping.FirstReply(ctx, "/proc/"+strconv.Itoa(cj.State.Pid)+"/ns/net", dst, startupProbeLimit)
		if err != nil {
			return s, err
		}
		s.Phases[netmode.PhaseFirstPacket] = first.Sub(started)
		end = first
	} else {
		s.NoPeer = true
	}
	s.Total = end.Sub(t0)
	return s, nil
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
