package dockerengine

import (
	"context"
	"errors"
	"fmt"
)

// The labels on what cnperf creates on an engine; teardown and clean
// remove by them, so nothing else is ever touched.
const (
	LabelRun    = "cnperf.run"    // the run id
	LabelDeploy = "cnperf.deploy" // the deployment id (run id, or run id + "s2"...)
	LabelPID    = "cnperf.pid"    // the coordinator's pid, to tell a dead run
	LabelHost   = "cnperf.host"   // the coordinator's hostname
	LabelAgent  = "cnperf.agent"  // on the agent image
)

// RemoveLabelled removes every container, then every network, carrying
// label ("k=v"): nothing else.
func RemoveLabelled(ctx context.Context, e *Engine, label string) error {
	var errs []error
	cs, err := e.Containers(ctx, label)
	if err != nil {
		return err
	}
	// containers sharing another's namespace go first
	for pass := 0; pass < 2; pass++ {
		for i := range cs {
			c := &cs[i]
			if c.ID == "" {
				continue
			}
			if err := e.RemoveContainer(ctx, c.ID); err != nil {
				if pass == 1 {
					errs = append(errs, err)
				}
				continue
			}
			c.ID = ""
		}
	}
	ns, err := e.Networks(ctx, label)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, n := range ns {
		if err := e.RemoveNetwork(ctx, n.ID); err != nil {
			errs = append(errs, fmt.Errorf("network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}
