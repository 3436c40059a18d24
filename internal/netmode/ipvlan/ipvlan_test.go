package ipvlan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest/labrun"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/workload"
)

func TestCommands(t *testing.T) {
	tests := []struct {
		mode Mode
		want string
	}{
		{Mode{}, `ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add link eth0 name eth0 netns cnperf-x-h2-s2 mtu 1500 type ipvlan mode l2
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/16 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
`},
		{Mode{L3: true}, `ip -n cnperf-x-h1 route add 10.244.2.0/24 via 10.100.0.2 dev eth0
ip -n cnperf-x-h2 route add 10.244.1.0/24 via 10.100.0.1 dev eth0
ip netns add cnperf-x-h2-s2
ip -n cnperf-x-h2-s2 link set lo up
ip -n cnperf-x-h2 link add link eth0 name eth0 netns cnperf-x-h2-s2 mtu 1500 type ipvlan mode l3
ip -n cnperf-x-h2-s2 addr add 10.244.2.2/32 dev eth0
ip -n cnperf-x-h2-s2 link set eth0 up
ip -n cnperf-x-h2-s2 route add default dev eth0
`},
	}
	for _, tt := range tests {
		t.Run(tt.mode.Name(), func(t *testing.T) {
			rec := &lab.Recorder{}
			l, err := lab.New(lab.Config{ID: "x", Exec: rec, NoStateDirs: true})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := tt.mode.Setup(ctx, l); err != nil {
				t.Fatal(err)
			}
			if _, err := tt.mode.AddPod(ctx, l, l.Hosts[1], "s2"); err != nil {
				t.Fatal(err)
			}
			if got := rec.Text(); got != tt.want {
				t.Errorf("commands:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestMissingKernelOption(t *testing.T) {
	k := netmode.ParseKernelConfig(strings.NewReader("# CONFIG_IPVLAN is not set\n"))
	for _, m := range []Mode{{}, {L3: true}} {
		err := netmode.CheckWith(m, k, func(string) (string, error) { return "/usr/sbin/ip", nil })
		if err == nil || !strings.Contains(err.Error(), "needs CONFIG_IPVLAN") {
			t.Errorf("%s: check %v, want it to name CONFIG_IPVLAN", m.Name(), err)
		}
	}
}

func TestEndToEnd(t *testing.T) {
	for _, name := range []string{"ipvlan", "ipvlan-l3"} {
		t.Run(name, func(t *testing.T) { labrun.Run(t, name, labrun.Options{}) })
	}
}

// TestSkippedInComparison: on a kernel without IPvlan, a comparison that
// includes it records a skip naming the option and builds nothing.
func TestSkippedInComparison(t *testing.T) {
	m, _ := netmode.Get("ipvlan")
	if netmode.Check(m) == nil {
		t.Skip("this kernel has CONFIG_IPVLAN")
	}
	plan := plan.Plan{
		Cases:     []plan.Case{{Network: "ipvlan", Placement: ground.CrossHost}, {Network: "ipvlan-l3", Placement: ground.SameHost}},
		Workloads: []string{"tcp_rr"},
		Params:    workload.Params{Duration: 100 * time.Millisecond},
		Agent:     []string{"/nonexistent"},
	}
	run := &result.Run{}
	if err := runner.Execute(context.Background(), plan, run); err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 0 || len(run.Skipped) != 2 {
		t.Fatalf("%d results, %d skips; want 0 and 2", len(run.Results), len(run.Skipped))
	}
	for _, s := range run.Skipped {
		if !strings.Contains(s.Reason, "CONFIG_IPVLAN") {
			t.Errorf("%s skipped for %q, want the missing option named", s.Network, s.Reason)
		}
	}
}
