package speed

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func TestParseTicks(t *testing.T) {
	const stat = "cpu  10 20 30 40 50 60 70 80 0 0\n" +
		"cpu0 1 2 3 400 5 6 7 8 0 0\n" +
		"cpu1 10 0 0 100 0 0 0 25 0 0\n" +
		"intr 1 2 3\n"
	got := parseTicks(stat)
	want := map[int]Ticks{0: {Busy: 1 + 2 + 3 + 6 + 7, Idle: 405, Steal: 8}, 1: {Busy: 10, Idle: 100, Steal: 25}}
	if len(got) != len(want) {
		t.Fatalf("got %d CPUs, want %d: %v", len(got), len(want), got)
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("cpu%d: got %+v, want %+v", c, got[c], w)
		}
	}
}

func TestSetShare(t *testing.T) {
	two := &result.SpeedProbe{CPUs: []result.CPUSpeed{{CPU: 0}, {CPU: 1}}}
	cell := 1.5
	for _, tc := range []struct {
		name  string
		ms    *result.MachineSpeed
		cost  *result.CPUCost
		share float64
	}{
		// 2 CPUs x 2 s = 4 CPU-s; the machine was busy 3.5, the cell 1.5:
		// other work took 2, steal 0.4
		{"other work and steal", &result.MachineSpeed{Before: two, StealS: []float64{0.1, 0.3}}, &result.CPUCost{WallS: 2, MachineS: 3.5, AgentsS: 1, CellS: &cell}, 1 - 2.4/4},
		{"the agents alone without a cell figure", &result.MachineSpeed{Before: two}, &result.CPUCost{WallS: 2, MachineS: 3.5, AgentsS: 1.5}, 1 - 2.0/4},
		{"alone on the machine", &result.MachineSpeed{Before: two}, &result.CPUCost{WallS: 2, MachineS: 1.4, AgentsS: 1.5}, 1},
		{"no probe: no share", &result.MachineSpeed{}, &result.CPUCost{WallS: 2, MachineS: 3, AgentsS: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SetShare(tc.ms, tc.cost)
			if math.Abs(tc.ms.Share-tc.share) > 1e-9 {
				t.Errorf("share %.4f, want %.4f", tc.ms.Share, tc.share)
			}
		})
	}
}

// TestProbe probes this machine: every CPU gets a time, a pair's figures
// are positive where the partner answered, and the process's threads are
// left as they were (a later probe works the same).
func TestProbe(t *testing.T) {
	cpus := OnlineCPUs()
	for range 2 {
		p := Probe(cpus)
		if p == nil {
			t.Fatal("no probe")
		}
		if len(p.CPUs) != len(cpus) {
			t.Fatalf("%d CPUs probed, want %d", len(p.CPUs), len(cpus))
		}
		for i, c := range p.CPUs {
			if c.CPU != cpus[i] || c.SpinNs <= 0 {
				t.Errorf("cpu %d: %+v", cpus[i], c)
			}
		}
		for _, pr := range p.Pairs {
			if pr.A != cpus[0] || pr.B != cpus[1] || pr.BounceNs <= 0 || pr.XferNs <= 0 {
				t.Errorf("pair %+v", pr)
			}
		}
		if p.S <= 0 {
			t.Errorf("probe time %v", p.S)
		}
	}
}

// BenchmarkProbe is what a probe costs (two per cell): see
// docs/results.md's machine_speed.
func BenchmarkProbe(b *testing.B) {
	cpus := OnlineCPUs()
	var s float64
	for b.Loop() {
		s += Probe(cpus).S
	}
	b.ReportMetric(s/float64(b.N)*1e3, "probe-ms/op")
}
