package load_test

import (
	"context"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/racedet"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/labtest"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// TestLab runs the open- and closed-loop workloads across hosts on two
// networks, against the built-in server and against nginx started in the
// server pod; the lab must leave no nginx behind.
func TestLab(t *testing.T) {
	if racedet.On {
		t.Skip("timing assertions: run without -race (scripts/test.sh does)")
	}
	labtest.NeedRoot(t)
	for _, server := range []string{"builtin", "nginx"} {
		t.Run(server, func(t *testing.T) {
			plan := labrun.Plan(t, []plan.Case{
				{Network: "host-gw", Placement: "cross-host"},
				{Network: "vxlan", Placement: "cross-host"},
			}, "http_rate", "http_qps", "tcp_rate")
			plan.Params.Duration = 500 * time.Millisecond
			if server == "nginx" {
				// a closed loop's first answer waits for nginx's workers,
				// which a busy machine may not schedule within 0.5 s
				plan.Params.Duration = 2 * time.Second
			}
			want := float64(1000 * plan.Params.Duration / time.Second)
			plan.Params.Extra = map[string]string{"server": server, "rate": "1000", "connections": "8", "response-size": "350,4096"}
			if server == "nginx" {
				plan.Workloads = plan.Workloads[:2] // nginx speaks HTTP only
			}
			run := &result.Run{Environment: result.CaptureHost()}
			err := runner.Execute(context.Background(), plan, run)
			labtest.AssertClean(t, plan.Lab.ID)
			if err != nil {
				if server == "nginx" && plan.Validate() != nil {
					t.Skip(err)
				}
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, r := range run.Results {
				seen[r.Network+" "+r.Workload]++
				if r.Error != "" {
					t.Errorf("%s %s %s: %s", r.Network, r.Workload, r.Step, r.Error)
					continue
				}
				m := r.Metrics
				if r.Histogram == "" || m.LatencyUs["p50"] <= 0 || m.LatencyUs["p50"] > m.LatencyUs["p99.999"] || m.Errors != nil {
					t.Errorf("%s %s %s: implausible %v errors %v", r.Network, r.Workload, r.Step, m.LatencyUs, m.Errors)
				}
				if r.Workload != "http_qps" {
					// 1000/s: every scheduled request answered and measured
					if m.Extra["scheduled"] != want || float64(*m.Transactions) != want || m.Extra["samples"] != want {
						t.Errorf("%s %s %s: scheduled %v answered %d samples %v", r.Network, r.Workload, r.Step,
							m.Extra["scheduled"], *m.Transactions, m.Extra["samples"])
					}
					if m.Histograms["send_lag"] == "" || m.Histograms["uncorrected"] == "" {
						t.Errorf("%s %s: extra histograms missing", r.Network, r.Workload)
					}
				}
				t.Logf("%s %s %s: %.0f/s p50 %.1fus p99 %.1fus saturated=%v", r.Network, r.Workload, r.Step,
					*m.TransactionsPerS, m.LatencyUs["p50"], m.LatencyUs["p99"], m.Extra["saturated"])
			}
			for _, n := range []string{"host-gw", "vxlan"} {
				if seen[n+" http_rate"] != 2 || seen[n+" http_qps"] != 2 {
					t.Errorf("%s: %d http_rate and %d http_qps results, want one per response size", n, seen[n+" http_rate"], seen[n+" http_qps"])
				}
			}
		})
	}
}
