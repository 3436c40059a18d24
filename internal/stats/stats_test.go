package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func TestBasics(t *testing.T) {
	cases := []struct {
		name           string
		xs             []float64
		median, cv     float64
		method         string
		loMax, hiMin   float64 // the interval must contain [loMax, hiMin]
		wantNoInterval bool
	}{
		{"empty", nil, math.NaN(), 0, MethodNone, 0, 0, true},
		{"one", []float64{5}, 5, 0, MethodNone, 0, 0, true},
		{"two", []float64{4, 6}, 5, math.Sqrt2 / 5, MethodLogT, 4, 6, false},
		{"odd", []float64{3, 1, 2}, 2, 0.5, MethodLogT, 1.5, 2.5, false},
		{"zero mean", []float64{-1, 1}, 0, 0, MethodT, -1, 1, false},
		{"a zero", []float64{0, 0.01, 0.02}, 0.01, 1, MethodT, 0, 0.02, false},
		{"equal", []float64{7, 7, 7}, 7, 0, MethodLogT, 7, 7, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if m := Median(c.xs); !(m == c.median || math.IsNaN(m) && math.IsNaN(c.median)) {
				t.Errorf("median %g, want %g", m, c.median)
			}
			if cv := CV(c.xs); math.Abs(cv-c.cv) > 1e-12 {
				t.Errorf("cv %g, want %g", cv, c.cv)
			}
			lo, hi, method := Interval(c.xs, 0.95)
			if method != c.method {
				t.Errorf("method %q, want %q", method, c.method)
			}
			if c.wantNoInterval {
				if lo != 0 || hi != 0 {
					t.Errorf("interval [%g, %g] from %d samples", lo, hi, len(c.xs))
				}
				return
			}
			if lo > c.loMax || hi < c.hiMin || lo > Median(c.xs) || hi < Median(c.xs) {
				t.Errorf("interval [%g, %g] should hold [%g, %g] and the median", lo, hi, c.loMax, c.hiMin)
			}
		})
	}
}

// rng is deterministic: the rates below are the same on every run.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x636e70657266)) }

const experiments = 2000

// TestIntervalCoverage: the interval holds the true median about 95 % of
// the time, for the sample sizes a run has, under log-normal noise as a
// busy VM makes it (5 %, 15 %, 30 %), and with normal noise too.
func TestIntervalCoverage(t *testing.T) {
	const truth = 84000.0 // trans/s
	for _, noise := range []struct {
		name  string
		sigma float64
		draw  func(r *rand.Rand, sigma float64) float64
	}{
		{"lognormal 5%", 0.05, func(r *rand.Rand, s float64) float64 { return truth * math.Exp(s*r.NormFloat64()) }},
		{"lognormal 15%", 0.15, func(r *rand.Rand, s float64) float64 { return truth * math.Exp(s*r.NormFloat64()) }},
		{"lognormal 30%", 0.30, func(r *rand.Rand, s float64) float64 { return truth * math.Exp(s*r.NormFloat64()) }},
		{"normal 10%", 0.10, func(r *rand.Rand, s float64) float64 { return truth * (1 + s*r.NormFloat64()) }},
	} {
		for _, n := range []int{3, 5, 10, 20} {
			r := rng(uint64(n)*1000 + uint64(noise.sigma*100))
			covered := 0
			var method string
			for range experiments {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = noise.draw(r, noise.sigma)
				}
				var lo, hi float64
				lo, hi, method = Interval(xs, 0.95)
				if lo <= truth && truth <= hi {
					covered++
				}
			}
			rate := float64(covered) / experiments
			t.Logf("%-14s n=%-2d %-16s coverage %.1f%%", noise.name, n, method, 100*rate)
			// Binomial sd of the rate at 2000 experiments is 0.5 %: the
			// t intervals are exact (plus a little from containing the
			// sample median); order statistics at n=20 guarantee 95.9 %.
			if rate < 0.93 || rate > 0.98 {
				t.Errorf("%s n=%d: coverage %.3f, want 0.95 ± 0.02", noise.name, n, rate)
			}
		}
	}
}

// simulate draws one comparison of rounds rounds: the cell's true ratio to
// its reference is ratio, each measurement has independent log-normal noise
// sigma, and each round a drift hits both cells alike.
func simulate(r *rand.Rand, rounds int, ratio, sigma, drift float64) (a, b []float64) {
	for range rounds {
		d := math.Exp(drift * r.NormFloat64())
		b = append(b, 50000*d*math.Exp(sigma*r.NormFloat64()))
		a = append(a, 50000*ratio*d*math.Exp(sigma*r.NormFloat64()))
	}
	return a, b
}

type rates struct{ significant, better, worse, covered float64 }

func run(seed uint64, rounds int, ratio, sigma, drift float64, o Options, paired bool) rates {
	r := rng(seed)
	var out rates
	for range experiments {
		a, b := simulate(r, rounds, ratio, sigma, drift)
		var c result.Comparison
		if paired {
			c, _ = Paired(a, b, result.HigherBetter, o)
		} else {
			c, _ = Unpaired(a, b, result.HigherBetter, o)
		}
		if c.Significant {
			out.significant++
		}
		switch c.Verdict {
		case Better:
			out.better++
		case Worse:
			out.worse++
		}
		if c.CILow <= ratio && ratio <= c.CIHigh {
			out.covered++
		}
	}
	out.significant /= experiments
	out.better /= experiments
	out.worse /= experiments
	out.covered /= experiments
	return out
}

func TestPairedRatioCoverage(t *testing.T) {
	for _, n := range []int{3, 5, 10} {
		got := run(uint64(10+n), n, 0.8, 0.05, 0.1, Default, true)
		t.Logf("paired n=%-2d ratio 0.8, 5%% noise: interval holds the true ratio %.1f%%", n, 100*got.covered)
		if got.covered < 0.93 || got.covered > 0.98 {
			t.Errorf("n=%d: coverage %.3f", n, got.covered)
		}
	}
}

// TestPower: a real 20 % difference with 5 % noise in 5 rounds is found.
func TestPower(t *testing.T) {
	for _, c := range []struct {
		ratio   float64
		wantDir func(rates) float64
	}{
		{1.2, func(r rates) float64 { return r.better }},
		{0.8, func(r rates) float64 { return r.worse }},
	} {
		got := run(20, 5, c.ratio, 0.05, 0, Default, true)
		t.Logf("paired, 5 rounds, 5%% noise, true ratio %.1f: called %.1f%% of the time", c.ratio, 100*c.wantDir(got))
		if c.wantDir(got) < 0.85 {
			t.Errorf("ratio %g: found %.3f of the time, want most", c.ratio, c.wantDir(got))
		}
		if got.significant != c.wantDir(got) {
			t.Errorf("ratio %g: a significant call in the wrong direction", c.ratio)
		}
	}
}

// TestFalsePositives: no difference is called one at most 5 % of the time;
// with no minimum effect the test alone is calibrated at alpha.
func TestFalsePositives(t *testing.T) {
	cases := []struct {
		name         string
		rounds       int
		ratio, sigma float64
		o            Options
		paired       bool
		lo, hi       float64
	}{
		{"paired, min effect 5%, 3 rounds", 3, 1, 0.05, Default, true, 0, 0.05},
		{"paired, min effect 5%, 5 rounds", 5, 1, 0.05, Default, true, 0, 0.05},
		{"paired, min effect 5%, 10 rounds, 15% noise", 10, 1, 0.15, Default, true, 0, 0.05},
		{"paired, test alone, 3 rounds", 3, 1, 0.05, Options{}, true, 0.035, 0.065},
		{"paired, test alone, 5 rounds", 5, 1, 0.05, Options{}, true, 0.035, 0.065},
		{"paired, test alone, 10 rounds", 10, 1, 0.05, Options{}, true, 0.035, 0.065},
		{"Welch, test alone, 5 rounds", 5, 1, 0.05, Options{}, false, 0.03, 0.065},
		{"Welch, min effect 5%, 5 rounds", 5, 1, 0.05, Default, false, 0, 0.05},
		// A true change of exactly the minimum effect: the whole interval
		// is beyond it at most 2.5 % of the time.
		{"paired, true ratio 1.05, 5 rounds", 5, 1.05, 0.05, Default, true, 0, 0.035},
	}
	for i, c := range cases {
		got := run(uint64(100+i), c.rounds, c.ratio, c.sigma, 0, c.o, c.paired)
		t.Logf("%-45s significant %.1f%%", c.name, 100*got.significant)
		if got.significant < c.lo || got.significant > c.hi {
			t.Errorf("%s: significant %.3f of the time, want %.3f..%.3f", c.name, got.significant, c.lo, c.hi)
		}
	}
}

// TestPairedBeatsUnpaired: when each round's drift (another job on the VM,
// 15 %) hits both cells alike, pairing by round cancels it; comparing the
// two cells' samples as independent cannot.
func TestPairedBeatsUnpaired(t *testing.T) {
	paired := run(30, 5, 0.85, 0.03, 0.15, Default, true)
	unpaired := run(30, 5, 0.85, 0.03, 0.15, Default, false)
	t.Logf("true ratio 0.85, 3%% noise, 15%% shared drift, 5 rounds: paired finds it %.1f%%, unpaired %.1f%%",
		100*paired.worse, 100*unpaired.worse)
	if paired.worse < 0.9 || unpaired.worse > 0.5 || paired.worse < unpaired.worse+0.4 {
		t.Errorf("paired %.3f, unpaired %.3f", paired.worse, unpaired.worse)
	}
	nullP := run(31, 5, 1, 0.03, 0.15, Default, true)
	nullU := run(31, 5, 1, 0.03, 0.15, Default, false)
	t.Logf("same, no difference: paired significant %.1f%%, unpaired %.1f%%", 100*nullP.significant, 100*nullU.significant)
	if nullP.significant > 0.05 || nullU.significant > 0.05 {
		t.Errorf("false positives: paired %.3f, unpaired %.3f", nullP.significant, nullU.significant)
	}
}

func TestComparisonEdges(t *testing.T) {
	cases := []struct {
		name    string
		a, b    []float64
		paired  bool
		better  result.Better
		ok      bool
		ratio   float64
		verdict string
		level   float64
	}{
		{"no pairs", nil, nil, true, result.HigherBetter, false, 0, "", 0},
		{"zero", []float64{0, 1}, []float64{1, 1}, true, result.HigherBetter, false, 0, "", 0},
		{"one round", []float64{2}, []float64{1}, true, result.HigherBetter, true, 2, Same, 0},
		{"same ratio every round", []float64{2, 4, 6}, []float64{1, 2, 3}, true, result.HigherBetter, true, 2, Better, 0.95},
		{"same ratio, lower better", []float64{2, 4, 6}, []float64{1, 2, 3}, true, result.LowerBetter, true, 2, Worse, 0.95},
		{"identical", []float64{5, 6}, []float64{5, 6}, true, result.HigherBetter, true, 1, Same, 0.95},
		{"unequal lengths pair the first", []float64{2, 2, 9}, []float64{1, 1}, true, result.HigherBetter, true, 2, Better, 0.95},
		{"welch one each", []float64{3}, []float64{1}, false, result.HigherBetter, true, 3, Same, 0},
		{"welch constant sides", []float64{3, 3}, []float64{1, 1}, false, result.LowerBetter, true, 3, Worse, 0.95},
		{"welch empty", []float64{3}, nil, false, result.HigherBetter, false, 0, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Unpaired
			if c.paired {
				f = Paired
			}
			got, ok := f(c.a, c.b, c.better, Default)
			if ok != c.ok {
				t.Fatalf("ok %v", ok)
			}
			if !ok {
				return
			}
			if math.Abs(got.Ratio-c.ratio) > 1e-12 || got.Verdict != c.verdict || got.CILevel != c.level {
				t.Errorf("got %+v, want ratio %g verdict %s level %g", got, c.ratio, c.verdict, c.level)
			}
			for _, v := range []float64{got.Ratio, got.CILow, got.CIHigh, got.P} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("non-finite value in %+v", got)
				}
			}
		})
	}
}
