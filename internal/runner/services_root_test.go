package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/svc"
)

// TestServicesRoot runs the services study end to end, small: the pod-IP
// reference and two load balancers (one netfilter, one eBPF), two scale
// steps, tcp_crr and tcp_rr; every result must be sane and carry its lb
// and service count, and nothing may be left behind.
func TestServicesRoot(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: ground.CrossHost}}, "tcp_crr", "tcp_rr")
	plan.Params.Duration = 300 * time.Millisecond
	plan.LBs = []string{"none", "iptables", "ebpf-socket"}
	plan.Services = []int{1, 20}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := 2 * (1 + 2*2) // workloads x (reference + lbs x steps)
	for _, lb := range plan.LBs[1:] {
		l, _ := svc.New(lb)
		if svc.Check(l) != nil {
			want -= 2 * 2
		}
	}
	if len(run.Results) != want {
		t.Fatalf("%d results, want %d", len(run.Results), want)
	}
	for _, r := range run.Results {
		labtest.CheckSane(t, r)
		if r.LB == "" || (r.LB != "none" && r.Services == 0) || (r.LB == "none" && r.Services != 0) {
			t.Errorf("result lb %q services %d", r.LB, r.Services)
		}
		if r.LB != "none" && r.Metrics.Extra["sync_s"] <= 0 {
			t.Errorf("%s %d: no sync time", r.LB, r.Services)
		}
		if r.LB == "ebpf-socket" && r.Workload == "tcp_crr" {
			if _, ok := r.Metrics.Extra["vs_iptables_pct"]; !ok {
				t.Errorf("ebpf-socket %d has no %% against iptables", r.Services)
			}
		}
	}
}

// UDP through every load balancer that can run here: udp_rr answered
// through the service's VIP (a load balancer that did not translate UDP
// would leave the client without a single answer), beside tcp_rr on the
// same services.
func TestServicesUDPRoot(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: ground.CrossHost}}, "udp_rr", "tcp_rr")
	plan.Params.Duration = 300 * time.Millisecond
	plan.LBs = []string{"iptables", "nftables", "ebpf-socket", "ebpf-tc"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range run.Results {
		labtest.CheckSane(t, r)
		if r.Workload == "udp_rr" {
			got[r.LB] = true
			if r.Path == "" || r.Services != 1 {
				t.Errorf("%s: path %q services %d", r.LB, r.Path, r.Services)
			}
		}
	}
	for _, lb := range plan.LBs {
		l, _ := svc.New(lb)
		if svc.Check(l) == nil && !got[lb] {
			t.Errorf("no udp_rr result through %s (skipped: %v)", lb, run.Skipped)
		}
	}
}
