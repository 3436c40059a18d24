package alltoall_test

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	a2a "github.com/cnperf/cnperf/internal/workload/alltoall"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestAllToAllLab exchanges among 2 and 4 pods of host-gw on one host and
// on two (1:N-1), in this process with each pod's sockets in its own
// namespace: every cell's pods exchanged exactly rounds·N·(N-1) messages
// (the workload fails the result otherwise).
func TestAllToAllLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labtest.Plan(t, []runner.Case{{Network: "host-gw", Placement: "same-host"}, {Network: "host-gw", Placement: "cross-host"}}, "alltoall")
	plan.AllToAllPods = []int{2, 4}
	plan.Spreads = []string{"1:N-1"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 4 {
		t.Fatalf("%d results, want 4", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s %s: %s", r.Placement, r.Step, r.Error)
		}
		if r.Params["in_process"] != true {
			t.Errorf("%s %s: not exchanged in this process (params %v)", r.Placement, r.Step, r.Params)
		}
		n := r.Params["pods"].(int)
		rounds := *r.Metrics.Transactions
		if want := rounds * int64(n*(n-1)); *r.Metrics.Messages != want || rounds < 2 {
			t.Errorf("%s %s: %d messages in %d rounds, want %d", r.Placement, r.Step, *r.Metrics.Messages, rounds, want)
		}
		if r.Metrics.LatencyUs["p50"] <= 0 || *r.Metrics.ThroughputBps <= 0 {
			t.Errorf("%s %s: figures %+v", r.Placement, r.Step, r.Metrics)
		}
	}
}

// TestAllToAllManyPods exchanges among 200 pods (or as many as this
// process's open-file hard limit holds) in a fresh lab's host namespace,
// in this process: every pod sent and received exactly rounds·(N-1)
// messages, and nothing of the lab is left running.
func TestAllToAllManyPods(t *testing.T) {
	labtest.NeedRoot(t)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	n := min(200, a2a.MaxPodsFor(lim.Max))
	t.Logf("%d pods (open-file hard limit %d)", n, lim.Max)
	plan := labtest.Plan(t, []runner.Case{{Network: "baseline", Placement: "same-host"}}, "alltoall")
	plan.AllToAllPods = []int{n}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 1 || run.Results[0].Error != "" {
		t.Fatalf("results %+v", run.Results)
	}
	r := run.Results[0]
	rounds := *r.Metrics.Transactions
	if want := rounds * int64(n*(n-1)); rounds < 2 || *r.Metrics.Messages != want || r.Params["in_process"] != true {
		t.Errorf("%d messages in %d rounds, want %d; params %v", *r.Metrics.Messages, rounds, want, r.Params)
	}
	if ps := labtest.ProcsMentioning(plan.Lab.ID); len(ps) != 0 {
		t.Errorf("processes left: %v", ps)
	}
}
