package blocking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/experiment/blocking"
	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/nginx"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// Every network's backend receives its share of the balancer's requests,
// each row has its percentiles and, beside the baseline, its difference
// to it; nothing is left behind.
func TestBlockingLab(t *testing.T) {
	labtest.NeedRoot(t)
	if _, err := nginx.Binary(); err != nil {
		t.Skip(err)
	}
	cases := []plan.Case{
		{Network: "baseline", Placement: ground.SameHost},
		{Network: "bridge", Placement: ground.SameHost},
		{Network: "baseline", Placement: ground.CrossHost},
		{Network: "vxlan", Placement: ground.CrossHost},
		{Network: "host-gw", Placement: ground.CrossHost},
	}
	plan := labrun.Plan(t, cases, blocking.Name)
	plan.Params.Duration = time.Second
	plan.Params.Extra = map[string]string{"rate": "300", "connections": "8"}
	plan.Repeat = 2
	run := &result.Run{Environment: result.CaptureHost()}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := runner.Execute(ctx, plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Skipped) > 0 {
		t.Fatalf("skipped: %+v", run.Skipped)
	}
	if len(run.Results) != 2*len(cases) {
		t.Fatalf("%d results, want %d (every row in 2 rounds)", len(run.Results), 2*len(cases))
	}
	upstreams := map[string]bool{}
	for _, r := range run.Results {
		name := r.Network + " " + r.Placement
		if r.Error != "" {
			t.Errorf("%s: %s", name, r.Error)
			continue
		}
		m := r.Metrics
		if m.Transactions == nil || *m.Transactions < 30 {
			t.Errorf("%s: %v requests answered by its backend, want its share of 300 (60)", name, m.Transactions)
		}
		if s := m.Extra[result.ExtraShare]; s < 0.1 || s > 0.3 {
			t.Errorf("%s: share %.2f, want about 1/5", name, s)
		}
		for _, q := range []string{"mean", "p50", "p90", "p99", "p99.9", "max"} {
			if _, ok := m.LatencyUs[q]; !ok {
				t.Errorf("%s: no header-time %s", name, q)
			}
		}
		if m.LatencyUs["p50"] > m.LatencyUs["p99"] || m.LatencyUs["p99"] > m.LatencyUs["max"] {
			t.Errorf("%s: percentiles out of order %v", name, m.LatencyUs)
		}
		for _, q := range []string{"p50", "p99", "max"} {
			if _, ok := m.Extra[blocking.ConnectQuantile(q)]; !ok {
				t.Errorf("%s: no connect-time %s", name, q)
			}
		}
		if m.Extra[result.ExtraConnectMean] > m.LatencyUs["mean"] {
			t.Errorf("%s: connect mean %v above the header mean %v", name, m.Extra[result.ExtraConnectMean], m.LatencyUs["mean"])
		}
		_, hasDiff := m.Extra[result.ExtraBlockingDiff]
		if hasDiff != (r.Network != result.BaselineNetwork) {
			t.Errorf("%s: has a difference to the baseline: %v", name, hasDiff)
		}
		up, _ := r.Params["upstream"].(string)
		if r.Round == 1 {
			if upstreams[up] {
				t.Errorf("%s: upstream %s shared with another row", name, up)
			}
			upstreams[up] = true
		}
		if !strings.Contains(r.Path, "entry pod c1") {
			t.Errorf("%s: path %q does not say how the request went", name, r.Path)
		}
	}
	var build *result.Build
	for i := range run.Builds {
		for _, c := range run.Builds[i].Commands {
			if strings.Contains(c, "nginx-lb/nginx.conf") {
				build = &run.Builds[i]
			}
		}
	}
	if build == nil {
		t.Fatal("no build records the balancer's nginx")
	}
	links := 0
	for _, c := range build.Commands {
		if strings.Contains(c, "type veth peer name "+blocking.LinkDev) {
			links++
		}
	}
	if links != 4 {
		t.Errorf("%d links to the balancer, want one per network (4)", links)
	}
}
