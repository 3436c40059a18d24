package stats

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// The runs of docs/validation.md's "The machine's speed beside every
// cell": the issue's 128 KiB cross-host stream command, run with main's
// cnperf (no witness) and this one's, interleaved.
var speedRuns = []string{"speed-before-1", "speed-after-1", "speed-before-2", "speed-after-2", "speed-before-3", "speed-after-3"}

var speedTools = []string{"iperf3_tcp", "iperf2_tcp", "nuttcp_tcp"}

// streamRatio is network's throughput over the baseline's in run, for
// workload: the geometric mean of the ratios of the pairs a comparison
// uses, by round (bySpeed false, as without a witness) or by the
// machine's speed (pairBySpeed), and how it paired them.
func streamRatio(t *testing.T, run *result.Run, network, workload string, bySpeed bool) (float64, string) {
	applySpeeds(run)
	c := group(run.Results)
	key := result.CellKey{Network: network, Workload: workload, Placement: "cross-host"}
	ref, _ := Reference(key)
	a, b := c.samples(key, result.KeyThroughput), c.samples(ref, result.KeyThroughput)
	x, y, ok := byRound(a, b)
	method := "by round"
	if bySpeed {
		sl := speedSlopes(c, nil)[slopeKey{workload, "", result.KeyThroughput}]
		if sx, sy, p, ok := pairBySpeed(a, b, sl); ok {
			x, y, method = sx, sy, p.Method
		}
	}
	if !ok || len(x) == 0 {
		t.Fatalf("%s %s: nothing to pair", network, workload)
	}
	var s float64
	for i := range x {
		s += math.Log(x[i] / y[i])
	}
	return math.Exp(s / float64(len(x))), method
}

// TestSpeedValidation regenerates the doc's before/after table: per run,
// tcp_stream's vxlan/baseline and host-gw/baseline ratios, the median of
// the three reference tools' ratios, and how each was paired. `go test
// -run SpeedValidation -v ./internal/stats` prints it; the test fails
// when a number differs from the doc's (want).
func TestSpeedValidation(t *testing.T) {
	// want: per run and network, tcp_stream's ratio minus the tools'
	// median, by round and by speed (NaN: the run has no witness)
	nan := math.NaN()
	want := map[string][2][2]float64{ // [vxlan, host-gw][by round, by speed]
		"speed-before-1": {{-0.30, nan}, {-0.38, nan}},
		"speed-after-1":  {{+0.08, +0.08}, {+0.33, +0.23}},
		"speed-before-2": {{+0.05, nan}, {-0.24, nan}},
		"speed-after-2":  {{+0.29, +0.13}, {+0.47, +0.47}},
		"speed-before-3": {{+0.69, nan}, {+0.10, nan}},
		"speed-after-3":  {{-0.25, -0.20}, {-0.98, -0.98}},
	}
	for _, name := range speedRuns {
		path := filepath.Join("..", "..", "docs", "examples", name+".json")
		run, err := result.Read(path)
		if err != nil {
			t.Skipf("%v (the validation runs are not stored yet)", err)
		}
		hasWitness := slices.ContainsFunc(run.Results, func(r result.Result) bool { return r.MachineSpeed != nil })
		for ni, net := range []string{"vxlan", "host-gw"} {
			line := fmt.Sprintf("%-15s %-7s", name, net)
			for si, bySpeed := range []bool{false, true} {
				if bySpeed && !hasWitness {
					continue
				}
				s, method := streamRatio(t, run, net, "tcp_stream", bySpeed)
				var tools []float64
				methods := method
				for _, w := range speedTools {
					r, m := streamRatio(t, run, net, w, bySpeed)
					tools = append(tools, r)
					methods += "," + m
				}
				m := Median(tools)
				line += fmt.Sprintf(" | %s: tcp_stream %.2f, tools %.2f %.2f %.2f (median %.2f): %+.2f [%s]", map[bool]string{false: "by round", true: "by speed"}[bySpeed],
					s, tools[0], tools[1], tools[2], m, s-m, methods)
				if w, ok := want[name]; ok && math.Abs(w[ni][si]-(s-m)) > 0.005 {
					t.Errorf("%s %s: %+.2f, the doc says %+.2f", name, net, s-m, w[ni][si])
				}
			}
			t.Log(line)
		}
	}
}
