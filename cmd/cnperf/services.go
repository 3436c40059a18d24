package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
)

// applyServices turns --lb and --services (or the suite's) into a services
// plan. A load balancer the user named must be able to run here.
func applyServices(plan *runner.Plan, st suite.Suite, lbs, counts string, networksGiven bool) error {
	plan.LBs, plan.Services = st.LBs, st.Services
	if lbs != "" {
		plan.LBs = splitList(lbs)
		for _, name := range plan.LBs {
			if name == svc.None || name == svc.ClusterProxy {
				continue
			}
			lb, err := svc.New(name)
			if err != nil {
				return err
			}
			if err := svc.Check(lb); err != nil {
				return err
			}
		}
	}
	if counts != "" {
		plan.Services = nil
		for _, f := range splitList(counts) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("--services %q: use numbers, e.g. --services 1,100,1000,10000", f)
			}
			plan.Services = append(plan.Services, n)
		}
	}
	if len(plan.LBs) == 0 {
		if len(plan.Services) > 0 {
			return fmt.Errorf("--services needs --lb (e.g. --lb iptables,ebpf-socket)")
		}
		return nil
	}
	if lbs != "" && len(st.LBs) == 0 && !networksGiven {
		plan.Cases = []runner.Case{{Network: suite.DefaultServiceNetwork, Placement: netmode.CrossHost}}
	}
	// Baseline rows are added for ratios between networks; a services run
	// compares load balancers on one network and baseline has no pods.
	var cases []runner.Case
	for _, c := range plan.Cases {
		if c.Network != result.BaselineNetwork {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("services need a pod network; name one with --networks (e.g. %s)", suite.DefaultServiceNetwork)
	}
	plan.Cases = cases
	if len(st.LBs) == 0 && slices.Equal(plan.Workloads, st.Workloads) {
		plan.Workloads = suite.ServiceWorkloads()
	}
	return nil
}
