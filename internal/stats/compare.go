package stats

import (
	"fmt"
	"math"

	"github.com/cnperf/cnperf/internal/result"
)

// Options are the thresholds of a comparison.
type Options struct {
	Level float64 // of the interval; 0 means 0.95
	Alpha float64 // of the test; 0 means 0.05
	// MinEffect is the smallest change worth a verdict: a comparison
	// differs only when the whole interval of the ratio lies outside
	// [1-MinEffect, 1+MinEffect], and is equivalent when the whole
	// interval lies inside it. 0 means no minimum (the test alone, and no
	// equivalence can be shown).
	MinEffect float64
}

// Default is what cnperf uses: 95 % intervals, alpha 0.05, and a minimum
// effect of 5 %. Why 5 %: cnperf's own figures agree with the reference
// tools within 1-6 % (docs/validation.md), and two names for the same path
// (host and baseline) differ by a few percent from run to run; a smaller
// difference is not one a user should choose a network by. Requiring the
// whole interval (not just the point) beyond it means "differs, worse"
// reads "worse by at least 5 %, with 95 % confidence": a claim a CI gate
// can fail on.
var Default = Options{Level: 0.95, Alpha: 0.05, MinEffect: 0.05}

func (o Options) norm() Options {
	if o.Level == 0 {
		o.Level = 0.95
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	return o
}

// The tests, as recorded in Comparison.Test.
const (
	TestPaired = "paired t on log ratios"
	TestWelch  = "Welch t on logs"
)

// The estimators, as recorded in Comparison.Estimator: the ratio printed
// is the one the interval is about.
const (
	EstPaired   = "geometric mean of the per-round ratios"
	EstUnpaired = "ratio of the geometric means"
)

// The verdicts (Comparison.Verdict): what the data shows, and nothing more.
const (
	// Differs: p < alpha and the whole interval beyond 1 ± MinEffect.
	Differs = "differs"
	// Equivalent: the whole interval inside 1 ± MinEffect. This is the
	// two one-sided tests (TOST) read off the printed interval: with the
	// 95 % two-sided interval each one-sided test is at 2.5 %, stricter
	// than the usual TOST at 5 % (which reads the 90 % interval); cnperf
	// uses the interval it prints so that the mark and the printed
	// interval always agree.
	Equivalent = "equivalent"
	// Undecided: neither; always so for one round (no interval).
	Undecided = "undecided"
)

// The directions (Comparison.Direction): the side of 1 the ratio is on, in
// the figure's sense; "higher" and "lower" for a figure without one.
const (
	Better = "better"
	Worse  = "worse"
	Higher = "higher"
	Lower  = "lower"
)

// maxRounds bounds RoundsNeeded's search: beyond it, no estimate.
const maxRounds = 1000

// Paired compares cell a with reference b round by round: a[i] and b[i]
// were measured in the same round, so noise that hit the whole machine in
// that round cancels in their ratio. The ratio is a/b as the geometric
// mean of the per-round ratios, the estimate a paired t-test on the log
// ratios is about (a rank test cannot reach p < 0.05 with fewer than 6
// pairs); the interval is its t interval, exponentiated, so it is centred
// on the printed ratio. ok is false when there is nothing to compare: no
// pairs, or a value <= 0 (no ratio). One pair gives the ratio and no test
// (CILevel 0, P 1, Verdict undecided).
func Paired(a, b []float64, better result.Better, o Options) (c result.Comparison, ok bool) {
	o = o.norm()
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	if n == 0 || !allPositive(a) || !allPositive(b) {
		return c, false
	}
	d := make([]float64, n)
	for i := range a {
		d[i] = math.Log(a[i] / b[i])
	}
	m := Mean(d)
	c = result.Comparison{Ratio: math.Exp(m), Estimator: EstPaired, N: n, Alpha: o.Alpha, MinEffect: o.MinEffect, P: 1}
	if n < 2 {
		c.Test = "none: 1 round, no test"
		judge(&c, better)
		return c, true
	}
	sd := StdDev(d)
	test(&c, m, sd/math.Sqrt(float64(n)), float64(n-1), o, better)
	c.Test = TestPaired
	if c.Verdict == Undecided {
		c.RoundsNeeded = roundsToDecide(m, n, o, func(k int) (float64, float64) {
			return sd / math.Sqrt(float64(k)), float64(k - 1)
		})
	}
	return c, true
}

// Unpaired compares a with b when their samples were not taken side by
// side (two runs, at different times): the ratio of their geometric means,
// and Welch's t-test on the logarithms (unequal variances,
// Welch-Satterthwaite degrees of freedom), whose interval is about that
// ratio. ok is false when either side is empty or has a value <= 0. Fewer
// than 2 samples on a side give the ratio and no test.
func Unpaired(a, b []float64, better result.Better, o Options) (c result.Comparison, ok bool) {
	o = o.norm()
	if len(a) == 0 || len(b) == 0 || !allPositive(a) || !allPositive(b) {
		return c, false
	}
	na, nb := float64(len(a)), float64(len(b))
	la, lb := logs(a), logs(b)
	m := Mean(la) - Mean(lb)
	c = result.Comparison{Ratio: math.Exp(m), Estimator: EstUnpaired, N: len(a), NAgainst: len(b), Alpha: o.Alpha, MinEffect: o.MinEffect, P: 1}
	if len(a) < 2 || len(b) < 2 {
		c.Test = fmt.Sprintf("none: %d and %d rounds, no test", len(a), len(b))
		judge(&c, better)
		return c, true
	}
	sa, sb := variance(la), variance(lb)
	va, vb := sa/na, sb/nb
	se := math.Sqrt(va + vb)
	df := na + nb - 2
	if den := va*va/(na-1) + vb*vb/(nb-1); den > 0 {
		df = (va + vb) * (va + vb) / den
	}
	test(&c, m, se, df, o, better)
	c.Test = TestWelch
	if c.Verdict == Undecided {
		c.RoundsNeeded = roundsToDecide(m, max(len(a), len(b)), o, func(k int) (float64, float64) {
			n := float64(k)
			df := 2 * (n - 1)
			if sa*sa+sb*sb > 0 {
				df = (n - 1) * (sa + sb) * (sa + sb) / (sa*sa + sb*sb)
			}
			return math.Sqrt((sa + sb) / n), df
		})
	}
	return c, true
}

func variance(xs []float64) float64 { s := StdDev(xs); return s * s }

// test fills the p-value, interval and verdict of a t-test of the mean log
// ratio m with standard error se and df degrees of freedom.
func test(c *result.Comparison, m, se, df float64, o Options, better result.Better) {
	c.CILevel = o.Level
	if se == 0 || math.IsNaN(se) {
		// Every round gave the same ratio: no spread to test against.
		c.CILow, c.CIHigh = math.Exp(m), math.Exp(m)
		if m != 0 {
			c.P = 0
		}
	} else {
		c.P = tTwoSided(m/se, df)
		q := TQuantile(1-(1-o.Level)/2, df)
		c.CILow, c.CIHigh = math.Exp(m-q*se), math.Exp(m+q*se)
	}
	judge(c, better)
}

// judge sets Verdict, Significant and Direction from the numbers of c.
func judge(c *result.Comparison, better result.Better) {
	c.Verdict = verdictOf(*c)
	c.Significant = c.Verdict == Differs
	c.Direction = direction(c.Ratio, better)
}

// verdictOf reads the verdict off a comparison's numbers.
func verdictOf(c result.Comparison) string {
	e := c.MinEffect
	switch {
	case c.CILevel <= 0:
		return Undecided
	case c.P < c.Alpha && (c.CILow > 1+e || c.CIHigh < 1-e):
		return Differs
	case e > 0 && c.CILow >= 1-e && c.CIHigh <= 1+e:
		return Equivalent
	}
	return Undecided
}

// VerdictOf is c's verdict: Differs, Equivalent or Undecided. A
// comparison from an older file ("better", "worse", "same") differs when
// it was significant (the same rule), and is otherwise judged again from
// its interval and minimum effect.
func VerdictOf(c result.Comparison) string {
	switch c.Verdict {
	case Differs, Equivalent, Undecided:
		return c.Verdict
	}
	if c.Significant {
		return Differs
	}
	if v := verdictOf(c); v != Differs {
		return v
	}
	return Undecided
}

// direction is the side of 1 ratio r lies on, in the figure's sense.
func direction(r float64, better result.Better) string {
	if r == 1 || math.IsNaN(r) {
		return ""
	}
	up := r > 1
	switch better {
	case result.HigherBetter:
		if up {
			return Better
		}
		return Worse
	case result.LowerBetter:
		if up {
			return Worse
		}
		return Better
	}
	if up {
		return Higher
	}
	return Lower
}

// roundsToDecide is the smallest number of rounds k > n at which a mean
// log ratio m, with the standard error and degrees of freedom at(k), would
// give a verdict: the interval clear of 1 ± MinEffect (and p < alpha), or
// inside it. 0 when none up to maxRounds would (the ratio sits on the
// minimum effect, or the spread is too wide).
func roundsToDecide(m float64, n int, o Options, at func(k int) (se, df float64)) int {
	up, down := math.Log(1+o.MinEffect), math.Inf(-1)
	if o.MinEffect < 1 {
		down = math.Log(1 - o.MinEffect)
	}
	decides := func(k int) bool {
		se, df := at(k)
		if se == 0 || math.IsNaN(se) || df <= 0 {
			return false
		}
		h := TQuantile(1-(1-o.Level)/2, df) * se
		if (m-h > up || m+h < down) && tTwoSided(m/se, df) < o.Alpha {
			return true
		}
		return o.MinEffect > 0 && m-h >= down && m+h <= up
	}
	if !decides(maxRounds) {
		return 0
	}
	lo, hi := n, maxRounds // decides(hi); the search assumes it stays so above
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
