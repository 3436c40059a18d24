package reference_test

import (
	"context"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestLabStreams runs each reference stream once across hosts, both
// directions: each must report a transfer, and the server pod's interface
// must have received at least the payload it reports (the witness).
func TestLabStreams(t *testing.T) {
	labtest.NeedRoot(t)
	tools := []string{"iperf3_tcp", "iperf2_tcp", "nuttcp_tcp"}
	for _, dir := range []string{"up", "down"} {
		t.Run(dir, func(t *testing.T) {
			plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: "cross-host"}}, tools...)
			plan.Params.Duration = time.Second
			plan.Params.MessageSize = 65536
			plan.Params.Direction = dir
			if err := plan.Validate(); err != nil {
				t.Skip(err) // a tool is not installed: the error says which
			}
			run := &result.Run{Environment: result.CaptureHost()}
			err := runner.Execute(context.Background(), plan, run)
			labtest.AssertClean(t, plan.Lab.ID)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, r := range run.Results {
				seen[r.Workload] = true
				if r.Error != "" {
					t.Errorf("%s: %s", r.Workload, r.Error)
					continue
				}
				m := r.Metrics
				if m.ThroughputBps == nil || *m.ThroughputBps < 1e6 || m.Bytes == nil || m.DurationS == nil ||
					*m.DurationS < 0.5 || *m.DurationS > 3 {
					t.Errorf("%s: implausible %+v", r.Workload, m)
					continue
				}
				if dir == "up" {
					if w := m.Extra[result.ExtraIfaceRxPerBytes]; w < 1 {
						t.Errorf("%s: the server's interface received %.3f bytes per reported payload byte, want at least 1", r.Workload, w)
					}
				}
				t.Logf("%s %s: %.2f Gbit/s over %.2f s, interface %.3f bytes per payload byte", r.Workload, dir,
					*m.ThroughputBps/1e9, *m.DurationS, m.Extra[result.ExtraIfaceRxPerBytes])
			}
			for _, w := range tools {
				if !seen[w] {
					t.Errorf("%s: no result", w)
				}
			}
		})
	}
}
