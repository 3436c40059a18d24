package main

import (
	"slices"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/experiment/startup"
	"github.com/cnperf/cnperf/internal/suite"
)

// cost is a plan's measuring time, roughly: cells × rounds × duration.
func cost(s *runSetup) time.Duration {
	p := s.plan
	ep := p.ExperimentPlan(nil)
	pods := ep.Int("startup-pods")
	if pods == 0 && slices.Contains(p.Workloads, startup.Name) {
		pods = startup.DefaultPods
	}
	n := len(p.Cases) * len(p.Workloads) * max(1, p.Repeat) * max(1, len(ep.List("message-size"))) * max(1, len(ep.List("pods"))) *
		max(1, len(ep.List("spread"))) * max(1, len(p.LBs)) * max(1, len(p.Services)) * max(1, len(ep.List("tuning"))) * max(1, pods) * max(1, len(ep.List("density")))
	return time.Duration(n) * max(p.Params.Duration, time.Second)
}

// Every suite has a --quick version that is a valid plan and measures less
// than the suite; flags still override it.
func TestQuickSuites(t *testing.T) {
	for _, name := range suite.Names() {
		full, err := parseRunArgs([]string{"--suite", name})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		quick, err := parseRunArgs([]string{"--suite", name, "--quick"})
		if err != nil {
			t.Errorf("%s --quick: %v", name, err)
			continue
		}
		if err := quick.plan.Validate(); err != nil {
			t.Errorf("%s --quick: the plan is refused: %v", name, err)
		}
		if cf, cq := cost(full), cost(quick); cq >= cf {
			t.Errorf("%s: --quick measures %v, not less than the suite's %v", name, cq, cf)
		}
		if quick.plan.Params.Duration > full.plan.Params.Duration && full.plan.Params.Duration != 0 {
			t.Errorf("%s: --quick cells of %v, longer than the suite's %v", name, quick.plan.Params.Duration, full.plan.Params.Duration)
		}
	}
	// the suite itself is left as it was
	if s, _ := suite.Get("seed-latency"); s.Options["response-size"] != "350,4096" {
		t.Errorf("--quick changed the seed-latency suite: response-size %q", s.Options["response-size"])
	}
	over, err := parseRunArgs([]string{"--suite", "blocking", "--quick", "--repeat", "4", "--duration", "2s"})
	if err != nil || over.plan.Repeat != 4 || over.plan.Params.Duration != 2*time.Second {
		t.Errorf("flags do not override --quick: %+v, %v", over, err)
	}
}
