package backend

import (
	"context"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/lab/ping"
)

// PhaseFirstPacket is the start-up phase from a new pod's being ready to
// its first reply from a peer. The backend times it (FirstReply), after
// whatever phases the pod's creation went through (a network mode's
// namespace, links and control_plane; Docker's docker_create and
// docker_start).
const PhaseFirstPacket = "first_packet"

// FirstReply ends a start-up sample the same way on every backend. With a
// peer address (dst valid) it waits, up to limit, for the first ICMP echo
// reply from dst to requests sent from inside the new pod's network
// namespace ns (a lab namespace's name, or a /proc/PID/ns/net path), and records dst
// as Path and the time from ready to the reply as PhaseFirstPacket; with
// none it marks the sample NoPeer. Total runs from t0 (the create call) to
// the reply, or to ready without a peer; it stays unset on an error.
func (s *StartupSample) FirstReply(ctx context.Context, ns string, dst netip.Addr, t0, ready time.Time, limit time.Duration) error {
	end := ready
	if dst.IsValid() {
		s.Path = dst.String()
		first, err := ping.FirstReply(ctx, ns, dst, limit)
		if err != nil {
			return err
		}
		if s.Phases == nil {
			s.Phases = map[string]time.Duration{}
		}
		s.Phases[PhaseFirstPacket] = first.Sub(ready)
		end = first
	} else {
		s.NoPeer = true
	}
	s.Total = end.Sub(t0)
	return nil
}
