package stats

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// spread makes n speeds around center, evenly within ±rel.
func spread(center, rel float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		f := 0.0
		if n > 1 {
			f = 2*float64(i)/float64(n-1) - 1
		}
		out[i] = center * (1 + rel*f)
	}
	return out
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		speeds     []float64
		ok         bool
		fast, slow float64
	}{
		{"two clusters: 9 fast, 6 at half speed", append(spread(1, 0.03, 9), spread(0.52, 0.03, 6)...), true, 1, 0.52},
		{"one slow cell among many is a mode of its own", append(spread(1, 0.02, 11), 0.5), true, 1, 0.5},
		{"one mode", spread(0.9, 0.05, 15), false, 0, 0},
		{"a continuous spread is not two modes", spread(0.55, 0.8, 20), false, 0, 0},
		{"too few cells to tell", []float64{1, 1, 0.5, 0.5, 0.5}, false, 0, 0},
		{"two groups too close: 10 % apart", append(spread(1, 0.01, 8), spread(0.9, 0.01, 8)...), false, 0, 0},
		{"two groups that overlap", append(spread(1, 0.3, 8), spread(0.6, 0.3, 8)...), false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := Modes(tc.speeds)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%+v)", ok, tc.ok, m)
			}
			if !ok {
				return
			}
			if math.Abs(m.Fast-tc.fast) > 0.02*tc.fast || math.Abs(m.Slow-tc.slow) > 0.02*tc.slow {
				t.Errorf("modes %.3f and %.3f, want %.2f and %.2f", m.Fast, m.Slow, tc.fast, tc.slow)
			}
			if !(m.Cut > m.Slow && m.Cut < m.Fast) {
				t.Errorf("cut %.3f not between the modes", m.Cut)
			}
		})
	}
}

// witness is a result's machine speed: share, and a probe whose copy
// between two CPUs took xfer ns (0: no pair probe) and spin ns.
func witness(share, xfer, spin float64) *result.MachineSpeed {
	p := &result.SpeedProbe{CPUs: []result.CPUSpeed{{CPU: 0, SpinNs: spin}, {CPU: 1, SpinNs: spin}}, RT: true}
	if xfer > 0 {
		p.Pairs = []result.PairSpeed{{A: 0, B: 1, BounceNs: 150, XferNs: xfer}}
	}
	return &result.MachineSpeed{Before: p, After: p, Share: share}
}

// stream is a tcp_stream result of a round at a speed: its throughput is
// the network's rate times the speed, as a CPU-bound stream's is, and its
// CPU cost per byte does not change with the share.
func stream(network string, round int, rate float64, ms *result.MachineSpeed) result.Result {
	speed := 1.0
	if ms != nil {
		speed = ms.Share * 10000 / ms.Before.Pairs[0].XferNs
	}
	return result.Result{Network: network, Workload: "tcp_stream", Placement: "cross-host", Round: round,
		Metrics: result.Metrics{ThroughputBps: result.F(rate * speed),
			CPU: &result.CPUCost{CellNsPerByte: result.F(0.5 * 1e10 / rate)}},
		MachineSpeed: ms}
}

func TestSpeedsOf(t *testing.T) {
	fast, slow := witness(1, 10000, 40000), witness(1, 20000, 40000)
	var rs []result.Result
	for r := 1; r <= 5; r++ {
		ms := fast
		if r == 2 || r == 4 {
			ms = slow
		}
		rs = append(rs, stream("baseline", r, 20e9, fast), stream("vxlan", r, 14e9, ms))
	}
	rs = append(rs, result.Result{Network: "old", Workload: "tcp_stream", Round: 1}) // no witness
	sp := SpeedsOf(rs)
	if sp.Summary == nil || sp.Summary.Cells != 10 || sp.Summary.Probe != "xfer" {
		t.Fatalf("summary %+v", sp.Summary)
	}
	if !slices.Equal(sp.Summary.Modes, []float64{1, 0.5}) || sp.Summary.Slow != 2 {
		t.Errorf("modes %v, slow %d: want [1 0.5], 2", sp.Summary.Modes, sp.Summary.Slow)
	}
	for i, r := range rs {
		want, mode := 1.0, ModeFast
		switch {
		case r.MachineSpeed == nil:
			want, mode = 0, ""
		case r.MachineSpeed == slow:
			want, mode = 0.5, ModeSlow
		}
		if math.Abs(sp.Rel[i]-want) > 1e-9 || sp.Mode[i] != mode {
			t.Errorf("%s round %d: relative %.3f %q, want %.2f %q", r.Network, r.Round, sp.Rel[i], sp.Mode[i], want, mode)
		}
	}
	// one result of ten without a pair probe: its probe speed unknown
	rs[0].MachineSpeed = witness(1, 0, 80000)
	if sp := SpeedsOf(rs); sp.Summary.Probe != "xfer" || sp.Rel[0] != 0 || math.Abs(sp.Rel[2]-1) > 1e-9 {
		t.Errorf("one pair missing: probe %q, relative %.3f and %.3f, want xfer, 0 (unknown) and 1", sp.Summary.Probe, sp.Rel[0], sp.Rel[2])
	}
	// two of ten: every speed comes from the spin
	rs[2].MachineSpeed = witness(1, 0, 40000)
	if sp := SpeedsOf(rs); sp.Summary.Probe != "spin" || math.Abs(sp.Rel[0]-0.5) > 1e-9 || math.Abs(sp.Rel[3]-1) > 1e-9 {
		t.Errorf("spin fallback: probe %q, relative %.3f and %.3f, want spin, 0.5 and 1", sp.Summary.Probe, sp.Rel[0], sp.Rel[3])
	}
	if sp := SpeedsOf([]result.Result{{Network: "x"}}); sp.Summary != nil {
		t.Errorf("no witness: summary %+v, want none", sp.Summary)
	}
}

// samplesOf makes a sample per round, the probe's speed in that round
// as given and the CPU share whole.
func samplesOf(vals, probes []float64) []sample {
	var out []sample
	for i := range vals {
		out = append(out, sample{round: i + 1, v: vals[i], speed: speedAt{share: 1, probe: probes[i]}})
	}
	return out
}

func TestPairBySpeed(t *testing.T) {
	follows := slope{probe: 1, probeSE: 0.1, n: 15, cells: 3, df: 11}
	flat := slope{share: 0.9, shareSE: 0.6, probe: 0.05, probeSE: 0.1, n: 15, cells: 3, df: 11}
	for _, tc := range []struct {
		name     string
		a, b     []sample
		sl       slope
		ok       bool
		method   string
		x, y     []float64
		noteHas  []string
		pairsUse int
	}{
		{
			name: "every round at one speed: by round",
			a:    samplesOf([]float64{7, 7, 7}, []float64{1, 0.95, 1}), b: samplesOf([]float64{10, 10, 10}, []float64{0.97, 1, 1}),
			sl: follows, ok: true, method: result.SpeedSame, x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
		},
		{
			name: "rounds 2 and 4 of the cell slow: paired across rounds where the speeds match",
			a:    samplesOf([]float64{7, 3.5, 7, 3.5, 7}, []float64{1, 0.5, 1, 0.5, 1}),
			b:    samplesOf([]float64{10, 10, 10, 5, 10}, []float64{1, 1, 1, 0.5, 1}),
			sl:   follows, ok: true, method: result.SpeedMatched,
			// round 4 pairs with 4 (both slow), 2 with nothing of its speed
			// left: rounds 1, 3, 4, 5 by round
			x: []float64{7, 7, 3.5, 7}, y: []float64{10, 10, 5, 10}, pairsUse: 4,
			noteHas: []string{"round 2 share 1.00 probe 0.50 against the reference's share 1.00 probe 1.00", "left out: its round 2, the reference's 2"},
		},
		{
			name: "slow rounds at different rounds: paired across rounds",
			a:    samplesOf([]float64{7, 3.5, 7, 7, 7}, []float64{1, 0.5, 1, 1, 1}),
			b:    samplesOf([]float64{10, 10, 10, 5, 10}, []float64{1, 1, 1, 0.5, 1}),
			sl:   follows, ok: true, method: result.SpeedMatched,
			x: []float64{7, 3.5, 7, 7, 7}, y: []float64{10, 5, 10, 10, 10}, pairsUse: 5,
			noteHas: []string{"its round 2 with the reference's 4", "its round 4 with the reference's 2"},
		},
		{
			name: "too few same-speed pairs: by round, saying why",
			a:    samplesOf([]float64{7, 3.5, 3.5, 3.5, 7}, []float64{1, 0.5, 0.5, 0.5, 1}),
			b:    samplesOf([]float64{10, 10, 10, 10, 10}, []float64{1, 1, 1, 1, 1}),
			sl:   follows, ok: true, method: result.SpeedUnmatched,
			x: []float64{7, 3.5, 3.5, 3.5, 7}, y: []float64{10, 10, 10, 10, 10}, pairsUse: 5,
			noteHas: []string{"only 2 pairs", "round 2 share 1.00 probe 0.50 against the reference's share 1.00 probe 1.00", "round 4"},
		},
		{
			name: "a figure that does not follow the speed: by round",
			a:    samplesOf([]float64{7, 7, 7}, []float64{1, 0.5, 1}), b: samplesOf([]float64{10, 10, 10}, []float64{1, 1, 0.5}),
			sl: flat, ok: true, method: result.SpeedIndependent, x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
			noteHas: []string{"does not follow", "slope on the CPU share 0.90 ± 0.60, on the probe 0.05 ± 0.10"},
		},
		{
			name: "a slope of 0.5: speeds 15 % apart move the figure 7 %, paired as one speed",
			a:    samplesOf([]float64{7, 7, 7}, []float64{1, 0.87, 1}), b: samplesOf([]float64{10, 10, 10}, []float64{1, 1, 0.87}),
			sl: slope{probe: 0.5, probeSE: 0.1, n: 15, cells: 3, df: 11}, ok: true, method: result.SpeedMatched, x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
		},
		{
			name: "a slope on the share: rounds whose shares differ are not one speed",
			a:    []sample{{1, 7, speedAt{1, 1}}, {2, 3.5, speedAt{0.5, 1}}, {3, 7, speedAt{1, 1}}, {4, 7, speedAt{1, 1}}},
			b:    []sample{{1, 10, speedAt{1, 1}}, {2, 10, speedAt{1, 1}}, {3, 10, speedAt{1, 1}}, {4, 10, speedAt{1, 1}}},
			sl:   slope{share: 1, shareSE: 0.1, n: 15, cells: 3, df: 10}, ok: true, method: result.SpeedMatched,
			x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
			noteHas: []string{"round 2 share 0.50 probe 1.00 against the reference's share 1.00 probe 1.00", "left out: its round 2, the reference's 2"},
		},
		{
			name: "a sample without a share: not paired by speed",
			a:    []sample{{1, 7, speedAt{1, 1}}, {2, 7, speedAt{0, 0}}}, b: samplesOf([]float64{10, 10}, []float64{1, 1}), sl: follows,
		},
		{
			name: "a probe unknown, the figure following the probe: that sample cannot be matched",
			a:    samplesOf([]float64{7, 7, 7, 7}, []float64{1, 0, 1, 1}), b: samplesOf([]float64{10, 10, 10, 10}, []float64{1, 1, 1, 1}),
			sl: follows, ok: true, method: result.SpeedMatched, x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
			noteHas: []string{"round 2 share 1.00 probe unknown against", "left out: its round 2, the reference's 2"},
		},
		{
			name: "a probe unknown, the figure following only the share: matched on the share",
			a:    samplesOf([]float64{7, 7, 7}, []float64{1, 0, 1}), b: samplesOf([]float64{10, 10, 10}, []float64{1, 1, 1}),
			sl: slope{share: 1, shareSE: 0.1, n: 15, cells: 3, df: 10}, ok: true, method: result.SpeedMatched, x: []float64{7, 7, 7}, y: []float64{10, 10, 10}, pairsUse: 3,
		},
		{
			name: "a file without rounds: not paired by speed",
			a:    []sample{{v: 7, speed: speedAt{1, 1}}}, b: []sample{{v: 10, speed: speedAt{1, 1}}}, sl: follows,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y, p, ok := pairBySpeed(tc.a, tc.b, tc.sl)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if p.Method != tc.method || p.Pairs != tc.pairsUse || p.Tolerance != SpeedTolerance {
				t.Errorf("method %q, %d pairs, tolerance %g; want %q, %d, %g (note: %s)", p.Method, p.Pairs, p.Tolerance, tc.method, tc.pairsUse, SpeedTolerance, p.Note)
			}
			if !slices.Equal(x, tc.x) || !slices.Equal(y, tc.y) {
				t.Errorf("pairs %v / %v, want %v / %v", x, y, tc.x, tc.y)
			}
			for _, s := range tc.noteHas {
				if !strings.Contains(p.Note, s) {
					t.Errorf("note %q lacks %q", p.Note, s)
				}
			}
		})
	}
}

func TestSpeedSlopes(t *testing.T) {
	var rs []result.Result
	speeds := []float64{1, 0.5, 0.8, 0.4, 1}
	for r, s := range speeds {
		ms := witness(s, 10000, 40000)
		rs = append(rs, stream("baseline", r+1, 20e9, ms), stream("vxlan", r+1, 14e9, ms))
	}
	applySpeeds(&result.Run{Results: rs})
	sl := speedSlopes(group(rs), nil)
	thr := sl[slopeKey{"tcp_stream", "", result.FigThroughput.Key}]
	if math.Abs(thr.share-1) > 1e-6 || thr.probe != 0 || thr.n != 10 || thr.cells != 2 || !thr.follows() {
		t.Errorf("throughput: %+v, want slope 1 on the share over 10 samples of 2 cells, following", thr)
	}
	cost := sl[slopeKey{"tcp_stream", "", result.FigCPUPerByte.Key}]
	if math.Abs(cost.share) > 1e-6 || cost.follows() {
		t.Errorf("CPU per byte: %+v, want slope 0, not following", cost)
	}
	// both parts vary: the throughput follows the probe, the share not
	rs = nil
	for r, s := range speeds {
		for i, net := range []string{"baseline", "vxlan"} {
			ms := witness([]float64{1, 0.7, 0.9, 0.8, 0.6}[(r+i)%5], 10000/s, 40000)
			res := stream(net, r+1, 20e9, ms)
			res.Metrics.ThroughputBps = result.F(20e9 * s)
			rs = append(rs, res)
		}
	}
	applySpeeds(&result.Run{Results: rs})
	thr = speedSlopes(group(rs), nil)[slopeKey{"tcp_stream", "", result.FigThroughput.Key}]
	if math.Abs(thr.probe-1) > 1e-6 || math.Abs(thr.share) > 1e-6 || thr.df != 10-2-2 {
		t.Errorf("two parts: %+v, want slope 1 on the probe, 0 on the share, 6 df", thr)
	}
}

// TestSummarizeSpeed: a network whose rounds 2 and 4 ran at half the
// machine's speed. By round its ratio to the baseline mixes in the
// machine (0.7 in three rounds, 0.35 in two); paired by speed it is the
// network's (0.7), the comparison says how it paired, and the run names
// its two speeds.
func TestSummarizeSpeed(t *testing.T) {
	fast, slow := witness(1, 10000, 40000), witness(1, 20000, 40000)
	// build makes 5 rounds of both cells, each slow in the rounds named
	build := func(slowNet, slowBase []int) *result.Run {
		run := &result.Run{Rounds: 5}
		for r := 1; r <= 5; r++ {
			vms, bms := fast, fast
			if slices.Contains(slowNet, r) {
				vms = slow
			}
			if slices.Contains(slowBase, r) {
				bms = slow
			}
			run.Results = append(run.Results, stream("baseline", r, 20e9, bms), stream("vxlan", r, 14e9, vms))
		}
		return run
	}
	vx := result.CellKey{Network: "vxlan", Workload: "tcp_stream", Placement: "cross-host"}
	speedWarnings := func(run *result.Run) []string {
		var out []string
		for _, w := range run.Warnings {
			if strings.HasPrefix(w, WarnSpeed) {
				out = append(out, w)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		slowNet, slow0 []int
		method         string
		pairs          int
		ratio          float64 // 0: not checked
		modes          []float64
		slowCells      int
		warned         bool
	}{
		// by round the ratio would be 0.7 in three rounds and 0.35 in two
		{"the network slow in rounds 2 and 4, the baseline in 4", []int{2, 4}, []int{4}, result.SpeedMatched, 4, 0.7, []float64{1, 0.5}, 3, false},
		{"slow in different rounds: paired across them", []int{2, 4}, []int{1, 3}, result.SpeedMatched, 5, 0.7, []float64{1, 0.5}, 4, false},
		{"the network slow in four rounds, the baseline never: too few pairs", []int{1, 2, 3, 4}, nil, result.SpeedUnmatched, 5, 0, []float64{1, 0.5}, 4, true},
		{"one speed: by round", nil, nil, result.SpeedSame, 5, 0.7, []float64{1}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := build(tc.slowNet, tc.slow0)
			Summarize(run, nil)
			s := find(run.Summaries, vx, result.FigThroughput.Key)
			if s == nil || s.VsBaseline == nil || s.VsBaseline.Speed == nil {
				t.Fatalf("no speed pairing: %+v", s)
			}
			c := s.VsBaseline
			// a ratio mixing speeds is undecided, however narrow its
			// interval (here every round but one at half speed: 0.35x)
			if c.Speed.Method == result.SpeedUnmatched && (c.Verdict != Undecided || c.Significant || c.RoundsNeeded != 0 || !strings.Contains(c.Speed.Note, "undecided whatever")) {
				t.Errorf("unmatched: verdict %q significant %v rounds needed %d, want undecided and said so: %s", c.Verdict, c.Significant, c.RoundsNeeded, c.Speed.Note)
			}
			if c.Speed.Method != tc.method || c.Speed.Pairs != tc.pairs || (tc.ratio != 0 && math.Abs(c.Ratio-tc.ratio) > 1e-9) {
				t.Errorf("ratio %.3f by %q over %d pairs (%s), want %.2f %q over %d", c.Ratio, c.Speed.Method, c.Speed.Pairs, c.Speed.Note, tc.ratio, tc.method, tc.pairs)
			}
			costWant := result.SpeedIndependent
			if tc.method == result.SpeedSame {
				costWant = result.SpeedSame
			}
			if cost := find(run.Summaries, vx, result.FigCPUPerByte.Key); cost == nil || cost.VsBaseline.Speed.Method != costWant {
				t.Errorf("CPU per byte, which does not follow the speed, should pair by round (%s): %+v", costWant, cost)
			}
			if m := run.MachineSpeed; m == nil || !slices.Equal(m.Modes, tc.modes) || m.Slow != tc.slowCells || m.Cells != 10 {
				t.Errorf("run's speeds %+v, want modes %v, %d of 10 slow", m, tc.modes, tc.slowCells)
			}
			for _, r := range run.Results {
				want := ""
				if len(tc.modes) == 2 {
					want = ModeFast
					if r.MachineSpeed == slow {
						want = ModeSlow
					}
				}
				if r.MachineSpeed.Mode != want {
					t.Errorf("%s round %d: mode %q, want %q", r.Network, r.Round, r.MachineSpeed.Mode, want)
				}
			}
			ws := speedWarnings(run)
			if tc.warned != (len(ws) == 1) || (tc.warned && !strings.Contains(ws[0], "vxlan cross-host tcp_stream Gbit/s")) {
				t.Errorf("speed warnings %q, want one naming the cell: %v", ws, tc.warned)
			}
			Summarize(run, nil) // again: the same warnings, not twice
			if again := speedWarnings(run); len(again) != len(ws) {
				t.Errorf("%d speed warnings after summarizing twice, want %d", len(again), len(ws))
			}
		})
	}
}

func TestSpeedNote(t *testing.T) {
	for _, tc := range []struct {
		s    *result.SpeedSummary
		want string
	}{
		{nil, ""},
		{&result.SpeedSummary{Cells: 15, Probe: "xfer", Min: 0.5, Median: 1, Modes: []float64{1, 0.52}, Slow: 6, ShareMin: 0.6, ShareMedian: 0.97}, "other work left the cells 97 % of the CPUs (median; the least 60 %); the CPUs' speed by the xfer probe: two machine speeds seen: 1.00 and 0.52, 6 of 15 cells slow"},
		{&result.SpeedSummary{Cells: 15, Probe: "xfer", Min: 0.95, Median: 0.98, Modes: []float64{1}}, "one speed over 15 cells (the slowest 0.95)"},
		{&result.SpeedSummary{Cells: 60, Probe: "xfer", Min: 0.11, Median: 0.24, Modes: []float64{1}}, "no distinct speeds, 0.11 to 1.00 over 60 cells (median 0.24)"},
		{&result.SpeedSummary{Cells: 3, Probe: "spin", Min: 0.8, Median: 0.9}, "0.80 to 1.00 over 3 cells, too few to tell modes"},
	} {
		got := SpeedNote(tc.s)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("SpeedNote(%+v) = %q, want it to contain %q", tc.s, got, tc.want)
		}
	}
}

// TestUnmatchedNoRounds (issue 35 item 6): a comparison that could not
// pair samples of one speed has no round count, undecided before or not:
// more rounds at mixed speeds would not decide it.
func TestUnmatchedNoRounds(t *testing.T) {
	for _, v := range []string{Undecided, Differs} {
		c := result.Comparison{Verdict: v, RoundsNeeded: 7}
		sp := result.SpeedPairing{Method: result.SpeedUnmatched}
		unmatched(&c, &sp)
		if c.RoundsNeeded != 0 || c.Verdict != Undecided {
			t.Errorf("verdict %s: after unmatched %s with %d rounds needed, want undecided with none", v, c.Verdict, c.RoundsNeeded)
		}
	}
}

// TestNearestSortedSameGreedy: the n log n pairing by sorted speeds
// (used for many unpaired samples) makes the same pairs as sorting every
// pair, on speeds without ties, whichever parts of the speed the figure
// follows.
func TestNearestSortedSameGreedy(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := range 200 {
		sl := slope{share: 1, probe: 0.8, df: 10}
		if trial%3 == 1 {
			sl.probe = 0
		}
		if trial%3 == 2 {
			sl.share = 0
		}
		n, m := 1+rng.Intn(40), 1+rng.Intn(40)
		mk := func(k, first int) []sample {
			var ss []sample
			for i := range k {
				ss = append(ss, sample{round: first + i, v: 1, speed: speedAt{share: 0.3 + 0.7*rng.Float64(), probe: 0.4 + 0.6*rng.Float64()}})
			}
			return ss
		}
		a, b := mk(n, 1), mk(m, 1)
		lim := math.Log1p(SpeedTolerance)
		got := nearestSorted(a, b, sl, lim)
		want := nearestFirst(a, b, map[int]bool{}, map[int]bool{}, sl, lim) // n*m <= 1600: every pair sorted
		key := func(ps [][2]int) string {
			slices.SortFunc(ps, func(x, y [2]int) int { return x[0] - y[0] })
			return fmt.Sprint(ps)
		}
		if key(got) != key(want) {
			t.Fatalf("trial %d (%d and %d samples, slopes %v): sorted %v, every pair %v", trial, n, m, sl, key(got), key(want))
		}
	}
}

// BenchmarkNearestFirst: 2,000 unpaired rounds on each side, the case
// that sorting every pair made quadratic (4 million pairs).
func BenchmarkNearestFirst(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	var x, y []sample
	for i := range 2000 {
		x = append(x, sample{round: i + 1, v: 1, speed: speedAt{share: 0.5 + 0.5*rng.Float64(), probe: 1}})
		y = append(y, sample{round: i + 1, v: 1, speed: speedAt{share: 0.5 + 0.5*rng.Float64(), probe: 1}})
	}
	sl := slope{share: 1, df: 10}
	for b.Loop() {
		nearestFirst(x, y, map[int]bool{}, map[int]bool{}, sl, math.Log1p(SpeedTolerance))
	}
}
