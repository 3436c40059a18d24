package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/workload"
)

// ServiceWorkloads are the study's: short connections (tcp_crr, http_qps
// without keep-alive), long ones (tcp_rr, http_qps with keep-alive).
func ServiceWorkloads() []string {
	out := []string{"tcp_crr", "tcp_rr"}
	if _, err := workload.Get("http_qps"); err == nil {
		out = append(out, "http_qps")
	}
	return out
}

// DefaultServiceNetwork carries service runs when no network is named: a
// routed pod network without encapsulation, so the load balancer's cost
// is not hidden behind an overlay's.
const DefaultServiceNetwork = "host-gw"

// applyServices turns --lb and --services (or the suite's) into a services
// plan. A load balancer the user named must be able to run here.
func applyServices(plan *runner.Plan, st suite.Suite, lbs, counts string, networksGiven bool) error {
	plan.LBs, plan.Services = st.LBs, st.Services
	if lbs != "" {
		plan.LBs = splitList(lbs)
		for _, name := range plan.LBs {
			if name == svc.None {
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
		plan.Cases = []runner.Case{{Network: DefaultServiceNetwork, Placement: netmode.CrossHost}}
	}
	// Baseline rows are added for ratios between networks; a services run
	// compares load balancers on one network and baseline has no pods.
	var cases []runner.Case
	for _, c := range plan.Cases {
		if c.Network != "baseline" {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return fmt.Errorf("services need a pod network; name one with --networks (e.g. %s)", DefaultServiceNetwork)
	}
	plan.Cases = cases
	if len(st.LBs) == 0 && slices.Equal(plan.Workloads, st.Workloads) {
		plan.Workloads = ServiceWorkloads()
	}
	return nil
}
