package neighbours_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/experiment/neighbours"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	_ "github.com/cnperf/cnperf/internal/netmode/all"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// cgroupsOf lists the neighbour cgroups of run id still on the machine.
func cgroupsOf(id string) []string {
	var out []string
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified"} {
		m, _ := filepath.Glob(filepath.Join(root, "cnperf-"+id+"*-nb*"))
		out = append(out, m...)
	}
	return out
}

// TestNeighboursLab runs two busy neighbours beside a TCP stream on
// bridge, two rounds: every round has a result without and one with them;
// the neighbours' own cgroups measured real CPU; the comparison to the
// quiet cell is set; nothing is left behind.
func TestNeighboursLab(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}}, "tcp_stream")
	plan.Options = map[string]string{"neighbours": "busy:2"}
	plan.Repeat = 2
	run := &result.Run{Environment: result.CaptureHost()}
	err := runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if left := cgroupsOf(plan.Lab.ID); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 4 {
		t.Fatalf("%d results, want 2 rounds x (quiet, with neighbours)", len(run.Results))
	}
	for _, r := range run.Results {
		if r.Error != "" {
			t.Fatalf("%s round %d: %s", r.Step, r.Round, r.Error)
		}
		if r.Step == neighbours.StepQuiet {
			continue
		}
		if r.Step != "neighbours=busy:2" {
			t.Fatalf("step %q", r.Step)
		}
		// two busy loops on a shared 2-CPU machine: well above nothing
		if c := r.Metrics.Extra[result.ExtraNeighbourCPU]; c < 0.05 {
			t.Errorf("round %d: neighbours used %.3f CPU; they did not run", r.Round, c)
		}
		if _, ok := r.Metrics.Extra[result.ExtraQuiet]; !ok || r.VsQuiet == nil || r.VsQuiet.N != 2 {
			t.Errorf("round %d: no quiet value or comparison: %v %+v", r.Round, r.Metrics.Extra, r.VsQuiet)
		}
	}
}

// TestNeighboursInterrupted cuts a run short while its neighbours spin:
// their cgroups, pods and processes are gone afterwards.
func TestNeighboursInterrupted(t *testing.T) {
	labtest.NeedRoot(t)
	plan := labrun.Plan(t, []plan.Case{{Network: "bridge", Placement: "same-host"}}, "tcp_stream")
	plan.Options = map[string]string{"neighbours": "periodic:2:50%"}
	plan.Params.Duration = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// cancel once the neighbours' cgroups exist
		for i := 0; i < 600 && ctx.Err() == nil; i++ {
			if len(cgroupsOf(plan.Lab.ID)) > 0 {
				time.Sleep(3 * time.Second)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	err := runner.Execute(ctx, plan, &result.Run{})
	if err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("err %v, want the cancellation", err)
	}
	labtest.AssertClean(t, plan.Lab.ID)
	if left := cgroupsOf(plan.Lab.ID); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}
