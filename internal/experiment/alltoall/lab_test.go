package alltoall_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/experiment/alltoall"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
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
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: "same-host"}, {Network: "host-gw", Placement: "cross-host"}}, "alltoall")
	plan.Options = map[string]string{"pods": "2,4", "spread": "1:N-1"}
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
	plan := labrun.Plan(t, []plan.Case{{Network: "baseline", Placement: "same-host"}}, "alltoall")
	plan.Options = map[string]string{"pods": strconv.Itoa(n)}
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

// TestAllToAllPastNeighbourTable exchanges among 100 pods on one bridge in
// a fresh lab: they reach each other on-link, 100·99 neighbour entries,
// far past the kernel's shared table (gc_thresh3, 1,024 by default) that
// stopped ARP at 64 pods. Every pod's peers were pinned as permanent
// entries, recorded as one line a pod, and every message arrived.
func TestAllToAllPastNeighbourTable(t *testing.T) {
	labtest.NeedRoot(t)
	const n = 100
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if a2a.MaxPodsFor(lim.Max) < n {
		t.Skipf("open-file hard limit %d holds fewer than %d pods", lim.Max, n)
	}
	if limit := lab.NeighbourLimit(); limit >= n*(n-1) {
		t.Logf("gc_thresh3 %d holds %d entries: this machine would not overflow anyway", limit, n*(n-1))
	}
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}}, "alltoall")
	plan.Options = map[string]string{"pods": strconv.Itoa(n)}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	var bridge *result.Result
	for i, r := range run.Results {
		if r.Network == "bridge" {
			bridge = &run.Results[i]
		}
	}
	if bridge == nil || bridge.Error != "" {
		t.Fatalf("results %+v", run.Results)
	}
	rounds := *bridge.Metrics.Transactions
	if want := rounds * int64(n*(n-1)); rounds < 2 || *bridge.Metrics.Messages != want {
		t.Errorf("%d messages in %d rounds, want %d", *bridge.Metrics.Messages, rounds, want)
	}
	pinned := 0
	for _, b := range run.Builds {
		if b.Network != "bridge" {
			continue
		}
		for _, c := range b.Commands {
			if strings.Contains(c, "neigh replace") {
				if !strings.HasSuffix(c, "# for each of 99 on-link peers") {
					t.Errorf("recorded %q, want each pod's 99 peers", c)
				}
				pinned++
			}
		}
	}
	if pinned != n {
		t.Errorf("%d pods' entries recorded, want one line for each of %d", pinned, n)
	}
}

// TestAllToAllGatewayEntriesPastTable: where the entries still left to ARP
// (each pod's for its gateway, the gateway's for the pod: 2·8 for 8
// host-gw pods across hosts) exceed the kernel's table, here lowered to
// 10, the cell fails before measuring with one line naming the table.
func TestAllToAllGatewayEntriesPastTable(t *testing.T) {
	labtest.NeedRoot(t)
	defer alltoall.SetNeighbourLimit(10)()
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: "cross-host"}}, "alltoall")
	plan.Options = map[string]string{"pods": "8", "spread": "balanced"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, r := range run.Results {
		if r.Network == "host-gw" {
			got = r.Error
		}
	}
	t.Log(got)
	if want := "8 pods need 16 neighbour entries through their gateways"; !strings.HasPrefix(got, want) || !strings.Contains(got, "gc_thresh3 = 10") || strings.Contains(got, "\n") {
		t.Errorf("host-gw's error %q, want one line starting %q naming gc_thresh3 = 10", got, want)
	}
}
