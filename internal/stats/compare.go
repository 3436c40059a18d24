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
	// MinEffect is the smallest change worth a verdict: a difference is
	// Significant only when the whole interval of the ratio lies outside
	// [1-MinEffect, 1+MinEffect]. 0 means no minimum (the test alone).
	MinEffect float64
}

// Default is what cnperf uses: 95 % intervals, alpha 0.05, and a minimum
// effect of 5 %. Why 5 %: cnperf's own figures agree with the reference
// tools within 1-6 % (docs/validation.md), and two names for the same path
// (host and baseline) differ by a few percent from run to run; a smaller
// difference is not one a user should choose a network by. Requiring the
// whole interval (not just the point) beyond it means "worse" reads "worse
// by at least 5 %, with 95 % confidence": a claim a CI gate can fail on.
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

// Paired compares cell a with reference b round by round: a[i] and b[i]
// were measured in the same round, so noise that hit the whole machine in
// that round cancels in their ratio. The ratio is a/b, the median of the
// per-round ratios; the test is a paired t-test on the log ratios (a rank
// test cannot reach p < 0.05 with fewer than 6 pairs), and the interval is
// its t interval, exponentiated. ok is false when there is nothing to
// compare: no pairs, or a value <= 0 (no ratio). One pair gives the ratio
// and no test (CILevel 0, P 1, Verdict "same").
func Paired(a, b []float64, better result.Better, o Options) (c result.Comparison, ok bool) {
	o = o.norm()
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	if n == 0 || !allPositive(a) || !allPositive(b) {
		return c, false
	}
	ratios := make([]float64, n)
	d := make([]float64, n)
	for i := range a {
		ratios[i] = a[i] / b[i]
		d[i] = math.Log(ratios[i])
	}
	c = result.Comparison{Ratio: Median(ratios), N: n, Alpha: o.Alpha, MinEffect: o.MinEffect, P: 1}
	if n < 2 {
		c.Test = "none: 1 round, no test"
		c.Verdict = verdict(c, better)
		return c, true
	}
	mean, se := Mean(d), StdDev(d)/math.Sqrt(float64(n))
	test(&c, mean, se, float64(n-1), o, better)
	c.Test = TestPaired
	return c, true
}

// Unpaired compares a with b when their samples were not taken side by
// side (two runs, at different times): the ratio of their medians, and
// Welch's t-test on the logarithms (unequal variances, Welch-Satterthwaite
// degrees of freedom). ok is false when either side is empty or has a
// value <= 0. Fewer than 2 samples on a side give the ratio and no test.
func Unpaired(a, b []float64, better result.Better, o Options) (c result.Comparison, ok bool) {
	o = o.norm()
	if len(a) == 0 || len(b) == 0 || !allPositive(a) || !allPositive(b) {
		return c, false
	}
	na, nb := float64(len(a)), float64(len(b))
	c = result.Comparison{Ratio: Median(a) / Median(b), N: len(a), NAgainst: len(b), Alpha: o.Alpha, MinEffect: o.MinEffect, P: 1}
	if len(a) < 2 || len(b) < 2 {
		c.Test = fmt.Sprintf("none: %d and %d rounds, no test", len(a), len(b))
		c.Verdict = verdict(c, better)
		return c, true
	}
	la, lb := logs(a), logs(b)
	va, vb := variance(la)/na, variance(lb)/nb
	se := math.Sqrt(va + vb)
	df := na + nb - 2
	if den := va*va/(na-1) + vb*vb/(nb-1); den > 0 {
		df = (va + vb) * (va + vb) / den
	}
	test(&c, Mean(la)-Mean(lb), se, df, o, better)
	c.Test = TestWelch
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
	c.CILow, c.CIHigh = math.Min(c.CILow, c.Ratio), math.Max(c.CIHigh, c.Ratio)
	c.Significant = c.P < o.Alpha && (c.CILow > 1+o.MinEffect || c.CIHigh < 1-o.MinEffect)
	c.Verdict = verdict(*c, better)
}

// The verdicts.
const (
	Better = "better"
	Worse  = "worse"
	Same   = "same"
)

// verdict is "better" or "worse" for a significant change in the figure's
// direction, "same" otherwise; a figure without a direction gets "higher"
// or "lower".
func verdict(c result.Comparison, better result.Better) string {
	if !c.Significant {
		return Same
	}
	up := c.Ratio > 1
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
		return "higher"
	}
	return "lower"
}
