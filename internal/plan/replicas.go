package plan

import (
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/svc"
)

// Replicas are the declarations of the plan's networks and load
// balancers that replicate a real system (result.Replicator), by
// result.ReplicaKey: what a reader pairs a cluster's real systems with.
// nil when none declares one.
func (p *Plan) Replicas() map[string]string {
	var out map[string]string
	add := func(kind, name string, part any) {
		if r, ok := part.(result.Replicator); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[result.ReplicaKey(kind, name)] = r.Replicates()
		}
	}
	for _, c := range p.Cases {
		if m, err := netmode.Get(c.Network); err == nil {
			add(result.ReplicaNetwork, c.Network, m)
		}
	}
	for _, name := range p.LBs {
		if lb, err := svc.New(name); err == nil {
			add(result.ReplicaLB, name, lb)
		}
	}
	return out
}
