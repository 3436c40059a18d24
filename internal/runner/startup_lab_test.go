package runner_test

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestStartupLab measures start-up for real: baseline against
// docker-overlay (etcd registration), cross-host, three pods each. Overlay
// start-up must exceed the baseline's and report its KV registration.
func TestStartupLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labtest.Plan(t, []runner.Case{{Network: "baseline", Placement: "cross-host"}, {Network: "docker-overlay", Placement: "cross-host"}}, runner.StartupName)
	plan.StartupPods = 3
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Skipped) > 0 {
		t.Skipf("skipped: %s", run.Skipped[0].Reason)
	}
	byNet := map[string]result.Metrics{}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s: %s", r.Network, r.Error)
		}
		m := r.Metrics
		if m.StartupMs["mean"] <= 0 || m.StartupMs["p50"] > m.StartupMs["p95"] || m.StartupMs["p95"] > m.StartupMs["max"] {
			t.Errorf("%s: start-up figures out of order: %v", r.Network, m.StartupMs)
		}
		if m.PhasesMs["first_packet"] <= 0 {
			t.Errorf("%s: no first_packet phase: %v", r.Network, m.PhasesMs)
		}
		if r.Params["repeat"] != 3 {
			t.Errorf("%s: repeat %v, want 3", r.Network, r.Params["repeat"])
		}
		byNet[r.Network] = m
		t.Logf("%s: %v %v", r.Network, m.StartupMs, m.PhasesMs)
	}
	ov, base := byNet["docker-overlay"], byNet["baseline"]
	if ov.PhasesMs["kv_registration"] <= 0 {
		t.Errorf("docker-overlay reports no kv_registration: %v", ov.PhasesMs)
	}
	if ov.StartupMs["mean"] <= base.StartupMs["mean"] {
		t.Errorf("docker-overlay start-up %.1fms not above baseline's %.1fms", ov.StartupMs["mean"], base.StartupMs["mean"])
	}
}
