package plan_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/suite"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestClusterIPValid(t *testing.T) {
	s, err := suite.Get("clusterip")
	if err != nil {
		t.Fatal(err)
	}
	p := plan.Plan{Cases: s.Cases, Workloads: s.Workloads, Params: s.Params, LBs: s.LBs, Services: s.Services}
	if err := p.Validate(); err != nil {
		t.Fatalf("the clusterip preset does not validate: %v", err)
	}
	if len(s.LBs) < 6 || s.LBs[0] != "none" {
		t.Errorf("load balancers %v: want the reference and all five", s.LBs)
	}
}
