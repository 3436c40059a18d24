package runner_test

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/experiment/startup"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestStartupLab measures start-up for real: baseline against
// docker-overlay (etcd registration), cross-host, three pods each. Overlay
// start-up must exceed the baseline's and report its KV registration.
func TestStartupLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "baseline", Placement: "cross-host"}, {Network: "docker-overlay", Placement: "cross-host"}}, startup.Name)
	plan.Options = map[string]string{"startup-pods": "3"}
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

// TestStartupCNILab times the real CNI plugins beside cnperf's replicas,
// alternately in one cell: bridge (the CNI bridge plugin) and macvlan.
// Both kinds must have every phase, and the real plugin its DEL.
func TestStartupCNILab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}, {Network: "macvlan", Placement: "cross-host"}},
		startup.Name, "startup_cni")
	plan.Options = map[string]string{"startup-pods": "3"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Skipped) > 0 {
		t.Skipf("skipped: %s", run.Skipped[0].Reason)
	}
	got := map[string]bool{}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s %s: %s", r.Network, r.Workload, r.Error)
		}
		got[r.Network+" "+r.Workload] = true
		m := r.Metrics
		if m.StartupMs["mean"] <= 0 || m.PhasesMs["links"] <= 0 || m.PhasesMs["first_packet"] <= 0 || m.PhasesMs["namespace"] <= 0 {
			t.Errorf("%s %s: a phase is missing: %v %v", r.Network, r.Workload, m.StartupMs, m.PhasesMs)
		}
		if (r.Workload == "startup_cni") != (m.PhasesMs["del"] > 0) {
			t.Errorf("%s %s: del phase %v (only the real plugin has one)", r.Network, r.Workload, m.PhasesMs["del"])
		}
		t.Logf("%s %s: %v %v", r.Network, r.Workload, m.StartupMs, m.PhasesMs)
	}
	for _, k := range []string{"bridge startup", "bridge startup_cni", "macvlan startup", "macvlan startup_cni"} {
		if !got[k] {
			t.Errorf("no %s result (got %v)", k, got)
		}
	}
}
