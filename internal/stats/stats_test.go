package stats

import (
	"math"
	"math/rand/v2"
	"slices"
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
		switch {
		case c.Verdict != Differs:
		case c.Direction == Better:
			out.better++
		case c.Direction == Worse:
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
		verdict string // "differs worse", "equivalent", "undecided"
		level   float64
	}{
		{"no pairs", nil, nil, true, result.HigherBetter, false, 0, "", 0},
		{"zero", []float64{0, 1}, []float64{1, 1}, true, result.HigherBetter, false, 0, "", 0},
		{"one round", []float64{2}, []float64{1}, true, result.HigherBetter, true, 2, Undecided, 0},
		{"same ratio every round", []float64{2, 4, 6}, []float64{1, 2, 3}, true, result.HigherBetter, true, 2, "differs better", 0.95},
		{"same ratio, lower better", []float64{2, 4, 6}, []float64{1, 2, 3}, true, result.LowerBetter, true, 2, "differs worse", 0.95},
		{"identical", []float64{5, 6}, []float64{5, 6}, true, result.HigherBetter, true, 1, Equivalent, 0.95},
		{"unequal lengths pair the first", []float64{2, 2, 9}, []float64{1, 1}, true, result.HigherBetter, true, 2, "differs better", 0.95},
		{"no direction", []float64{2, 4, 6}, []float64{1, 2, 3}, true, "", true, 2, "differs higher", 0.95},
		{"welch one each", []float64{3}, []float64{1}, false, result.HigherBetter, true, 3, Undecided, 0},
		{"welch constant sides", []float64{3, 3}, []float64{1, 1}, false, result.LowerBetter, true, 3, "differs worse", 0.95},
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
			v := got.Verdict
			if v == Differs {
				v += " " + got.Direction
			}
			if math.Abs(got.Ratio-c.ratio) > 1e-12 || v != c.verdict || got.CILevel != c.level || got.Significant != (got.Verdict == Differs) {
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

// TestVerdicts: the three verdicts on paired rounds, the cases of issue 22
// among them: per-round ratios {0.809, 0.820, 0.899} have p = 0.035 and an
// interval wholly below 1 that still reaches above 0.95: no 5 % effect is
// shown, and no equivalence either: undecided, with the rounds that would
// decide it at that spread.
func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		name    string
		ratios  []float64
		verdict string
		lo, hi  float64 // the interval, to 0.01
		rounds  int     // RoundsNeeded
	}{
		{"issue 22: p < 0.05, interval reaches 0.95", []float64{0.809, 0.820, 0.899}, Undecided, 0.73, 0.97, 4},
		{"clear of 1 ± 5 %", []float64{0.80, 0.82, 0.81, 0.79, 0.80}, Differs, 0.79, 0.82, 0},
		{"inside [0.95, 1.05]", []float64{1.00, 1.01, 0.99, 1.00, 1.005}, Equivalent, 0.99, 1.01, 0},
		{"wide around 1", []float64{0.8, 1.2, 1.0}, Undecided, 0.60, 1.63, 114},
		{"one round", []float64{0.5}, Undecided, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a, b []float64
			for _, r := range c.ratios {
				a, b = append(a, 1000*r), append(b, 1000)
			}
			got, ok := Paired(a, b, result.HigherBetter, Default)
			if !ok {
				t.Fatal("no comparison")
			}
			gm := 1.0
			for _, r := range c.ratios {
				gm *= r
			}
			gm = math.Pow(gm, 1/float64(len(c.ratios)))
			if math.Abs(got.Ratio-gm) > 1e-12 || got.Estimator != EstPaired {
				t.Errorf("ratio %g (%s), want the geometric mean %g", got.Ratio, got.Estimator, gm)
			}
			if got.Verdict != c.verdict || math.Abs(got.CILow-c.lo) > 0.006 || math.Abs(got.CIHigh-c.hi) > 0.006 || got.RoundsNeeded != c.rounds {
				t.Errorf("%s [%.3f, %.3f] p %.3f, %d rounds to decide; want %s [%.2f, %.2f], %d", got.Verdict, got.CILow, got.CIHigh, got.P, got.RoundsNeeded, c.verdict, c.lo, c.hi, c.rounds)
			}
			if got.CILevel > 0 && !(got.CILow <= got.Ratio && got.Ratio <= got.CIHigh) {
				t.Errorf("the ratio %g is outside its own interval [%g, %g]", got.Ratio, got.CILow, got.CIHigh)
			}
		})
	}
}

// TestRoundsNeeded: the estimate is what it says: with the ratio and the
// spread held, that many rounds decide and one fewer does not.
func TestRoundsNeeded(t *testing.T) {
	base := []float64{0.809, 0.820, 0.899}
	c, _ := Paired(base, []float64{1, 1, 1}, result.HigherBetter, Default)
	k := c.RoundsNeeded
	if k <= 3 {
		t.Fatalf("rounds needed %d", k)
	}
	// k rounds with the same log mean and standard deviation
	logs := logs(base)
	m, sd := Mean(logs), StdDev(logs)
	mk := func(n int) []float64 {
		var xs []float64
		for i := range n {
			// ±sd·√((n-1)/n) alternately has sample SD sd (n even) or close
			s := sd * math.Sqrt(float64(n-1)/float64(n))
			if i%2 == 1 {
				s = -s
			}
			xs = append(xs, math.Exp(m+s))
		}
		return xs
	}
	ones := func(n int) []float64 { return slices.Repeat([]float64{1}, n) }
	if got, _ := Paired(mk(k+k%2), ones(k+k%2), result.HigherBetter, Default); got.Verdict == Undecided {
		t.Errorf("%d rounds at the same spread: still undecided %+v", k+k%2, got)
	}
	if k > 4 {
		if got, _ := Paired(mk(k-2+k%2), ones(k-2+k%2), result.HigherBetter, Default); got.Verdict != Undecided {
			t.Errorf("%d rounds already decide: the estimate %d is too high", k-2+k%2, k)
		}
	}
}

func TestChiSquareQuantile(t *testing.T) {
	// Table values: the 5 % and 95 % points of chi-square.
	for _, c := range []struct{ p, df, want float64 }{
		{0.05, 1, 0.00393}, {0.05, 2, 0.1026}, {0.05, 4, 0.7107}, {0.95, 2, 5.991}, {0.95, 10, 18.307}, {0.05, 29, 17.708},
	} {
		if got := ChiSquareQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-3*math.Max(1, c.want) {
			t.Errorf("chi-square %g quantile, %g df: %g, want %g", c.p, c.df, got, c.want)
		}
	}
}

func TestCVUpper(t *testing.T) {
	// 3 rounds: the bound is the CV times √(2/0.1026) = 4.41
	if got := CVUpper(0.02, 3, 0.95); math.Abs(got-0.02*4.415) > 1e-3 {
		t.Errorf("CVUpper(2 %%, 3) = %g", got)
	}
	if got := CVUpper(0.02, 30, 0.95); got < 0.02 || got > 0.03 {
		t.Errorf("CVUpper(2 %%, 30) = %g, want a little above 2 %%", got)
	}
	if !math.IsInf(CVUpper(0.02, 1, 0.95), 1) {
		t.Error("one sample bounds nothing")
	}
}
