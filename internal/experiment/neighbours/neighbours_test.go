package neighbours

import (
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/result"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{in: "busy:5", want: Spec{Kind: "busy", N: 5, Duty: 1, Text: "busy:5"}},
		{in: "periodic:5:10%", want: Spec{Kind: "periodic", N: 5, Duty: 0.1, Text: "periodic:5:10%"}},
		{in: "stream:2", want: Spec{Kind: "stream", N: 2, Duty: 1, Text: "stream:2"}},
		{in: "busy", err: "use busy:N"},
		{in: "busy:0", err: "use busy:N"},
		{in: "busy:17", err: "at most 16"},
		{in: "periodic:5", err: "use busy:N"},
		{in: "periodic:5:10", err: "percentage"},
		{in: "periodic:5:150%", err: "percentage"},
		{in: "idle:3", err: "use busy:N"},
		{in: "stream:2:5%", err: "use busy:N"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestNeighbourPods(t *testing.T) {
	topo := backend.Topology{Hosts: 2}
	got := neighbourPods(&topo, Spec{Kind: "busy", N: 3})
	if strings.Join(got, ",") != "nb1,nb2,nb3" || topo.Pods[0].Host != 1 || topo.Pods[1].Host != 2 || topo.Pods[2].Host != 1 {
		t.Errorf("busy pods %v on %+v", got, topo.Pods)
	}
	one := backend.Topology{Hosts: 1}
	got = neighbourPods(&one, Spec{Kind: "stream", N: 2})
	if strings.Join(got, ",") != "nb1c,nb1s,nb2c,nb2s" {
		t.Errorf("stream pods %v", got)
	}
	for _, p := range one.Pods {
		if p.Host != 1 {
			t.Errorf("one-host lab: %s on host %d", p.Name, p.Host)
		}
	}
}

func TestCgroupParsing(t *testing.T) {
	text := "4:memory:/x\n2:cpuacct:/a\n1:cpu:/b\n3:cpu,cpuacct:/c\n0::/d\n"
	for _, tc := range []struct {
		h    hierarchy
		want string
	}{
		{hierarchy{controllers: []string{"cpu"}}, "/b"},
		{hierarchy{controllers: []string{"cpuacct"}}, "/a"},
		{hierarchy{controllers: []string{"cpu", "cpuacct"}}, "/c"},
		{hierarchy{}, "/d"},
	} {
		if got, err := cgroupOf(text, tc.h); err != nil || got != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.h.controllers, got, err, tc.want)
		}
	}
	if d, ok := parseUsage("cpuacct.usage", "1500000000\n"); !ok || d != 1500*time.Millisecond {
		t.Errorf("cpuacct.usage: %v %v", d, ok)
	}
	if d, ok := parseUsage("cpu.stat", "usage_usec 2000\nuser_usec 1000\n"); !ok || d != 2*time.Millisecond {
		t.Errorf("cpu.stat: %v %v", d, ok)
	}
}

// TestFinish pairs each round's result with neighbours to the quiet one
// of its round: a steady 20 % drop is significant, with a ratio of 0.8.
func TestFinish(t *testing.T) {
	run := &result.Run{}
	for r := 1; r <= 4; r++ {
		q := 100.0 + float64(r)
		run.Results = append(run.Results,
			result.Result{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host", Step: StepQuiet, Round: r, Metrics: result.Metrics{ThroughputBps: result.F(q)}},
			result.Result{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host", Step: "neighbours=busy:5", Round: r, Metrics: result.Metrics{ThroughputBps: result.F(q * 0.8 * (1 + 0.001*float64(r)))}})
	}
	Neighbours{}.Finish(run)
	for _, r := range run.Results {
		if r.Step == StepQuiet {
			if r.VsQuiet != nil {
				t.Errorf("quiet result got a comparison")
			}
			continue
		}
		c := r.VsQuiet
		if c == nil || c.N != 4 || c.Ratio < 0.79 || c.Ratio > 0.81 || !c.Significant || c.Verdict != "differs" || c.Direction != "worse" || c.Against.Step != StepQuiet {
			t.Fatalf("round %d: %+v", r.Round, c)
		}
	}
}
