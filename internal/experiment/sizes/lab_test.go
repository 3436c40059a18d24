package sizes_test

import (
	"context"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestSweepLab sweeps two sizes over TCP and UDP streams on host-gw: one
// result per size and protocol, each carrying its size, and more bytes per
// second at 16 KiB than at 64 B.
func TestSweepLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "host-gw", Placement: "cross-host"}}, "tcp_stream", "udp_stream")
	plan.Options = map[string]string{"message-size": "64,16384"}
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s %s: %s", r.Workload, r.Step, r.Error)
		}
		if want := map[string]int{"size=64": 64, "size=16384": 16384}[r.Step]; r.Params["message_size"] != want {
			t.Errorf("%s %s: message_size %v, want %d", r.Workload, r.Step, r.Params["message_size"], want)
		}
		got[r.Workload+" "+r.Step] = *r.Metrics.ThroughputBps
	}
	if len(got) != 4 || len(run.Results) != 4 {
		t.Fatalf("results %v, want one per size and protocol", got)
	}
	for _, w := range []string{"tcp_stream", "udp_stream"} {
		if got[w+" size=16384"] <= got[w+" size=64"] {
			t.Errorf("%s: %.0f bit/s at 16 KiB not above %.0f at 64 B", w, got[w+" size=16384"], got[w+" size=64"])
		}
	}
}
