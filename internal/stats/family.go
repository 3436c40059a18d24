package stats

import (
	"math"
	"sort"

	"github.com/cnperf/cnperf/internal/result"
)

// Family-wise control. A table prints many verdicts at once (a default run
// ten, a suite dozens; recommend separates candidates on every figure of
// every pair), each tested at alpha: with 20 tests at 5 % and no effect at
// all, one "differs" in three such runs would be noise. cnperf controls
// the family-wise error rate with Holm's step-down procedure: the chance
// that any "differs" of the family is false stays at or below alpha.
// Why Holm and not Benjamini-Hochberg's false discovery rate: a reader
// acts on each verdict alone (choose host-gw over vxlan, fail a CI job),
// so one false claim matters, not the share of false ones among many; the
// families are small (tens), where Holm loses little power; and Holm
// holds whatever the dependence between the tests, while the ratios of one
// table share their baseline's rounds (correlated tests, for which BH's
// guarantee needs an extra assumption). Equivalence marks are not
// corrected: each already reads the 95 % two-sided interval, each
// one-sided test at 2.5 %.

// HolmMethod names the correction in output.
const HolmMethod = "Holm"

// PEffect is the p-value of a comparison's test of a difference of at
// least its minimum effect: the t-test of the mean log ratio against the
// nearer edge of [1-MinEffect, 1+MinEffect], two-sided so that PEffect <
// alpha exactly when the printed interval (at level 1-alpha) lies clear of
// that band, which with p < alpha is the verdict "differs". Its standard
// error is read back off the interval: exact for a paired comparison (N-1
// degrees of freedom); for Welch's, N+NAgainst-2 degrees of freedom, at
// least Welch's, so the p-value is not smaller than Welch's would be (a
// record without N: the normal approximation). 1
// when there is no test (one round) or the ratio lies inside the band.
func PEffect(c result.Comparison) float64 {
	if c.CILevel <= 0 || c.Ratio <= 0 || c.CILow <= 0 {
		return 1
	}
	m := math.Log(c.Ratio)
	edge := math.Log(1 + c.MinEffect)
	if m < 0 {
		edge = math.Inf(-1)
		if c.MinEffect < 1 {
			edge = math.Log(1 - c.MinEffect)
		}
	}
	d := math.Abs(m - edge)
	if (m >= 0 && m <= edge) || (m < 0 && m >= edge) {
		return 1
	}
	df := float64(c.N - 1)
	if c.NAgainst > 0 {
		df = float64(c.N + c.NAgainst - 2)
	}
	if c.N == 0 {
		// a record without its count: the normal approximation, under
		// which a printed interval clear of the band still gives
		// PEffect < alpha
		df = 1e6
	}
	half := (math.Log(c.CIHigh) - math.Log(c.CILow)) / 2
	if half <= 0 || math.IsNaN(half) {
		return 0 // every round gave the same ratio, outside the band
	}
	if df <= 0 {
		return 1
	}
	se := half / TQuantile(1-(1-c.CILevel)/2, df)
	return math.Min(1, tTwoSided(d/se, df))
}

// Holm says which of the p-values ps Holm's step-down procedure rejects
// at family-wise level alpha: sorted ascending, the k-th smallest (from
// 0) is rejected while every one before it was and it is below
// alpha/(m-k).
func Holm(ps []float64, alpha float64) []bool {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]bool, len(ps))
	m := len(ps)
	for k, i := range idx {
		if ps[i] >= alpha/float64(m-k) {
			break
		}
		out[i] = true
	}
	return out
}

// Family is what a correction did to a family of comparisons.
type Family struct {
	Method string // HolmMethod
	Alpha  float64
	// Size is how many tested comparisons (with an interval) the family
	// holds; Before and After how many differ before and after the
	// correction.
	Size, Before, After int
	// Demoted indexes the comparisons that differ alone but not after
	// the correction.
	Demoted []int
}

// CorrectFamily applies Holm's correction to the comparisons cs (nil and
// untested ones, one round, are left out of the family): one that differs
// alone but is not rejected is made undecided (without a round count:
// the one it had was for the uncorrected test).
func CorrectFamily(cs []*result.Comparison, alpha float64) Family {
	if alpha == 0 {
		alpha = Default.Alpha
	}
	f := Family{Method: HolmMethod, Alpha: alpha}
	var tested []int
	var ps []float64
	for i, c := range cs {
		if c == nil || c.CILevel <= 0 {
			continue
		}
		tested = append(tested, i)
		ps = append(ps, PEffect(*c))
	}
	f.Size = len(tested)
	rej := Holm(ps, alpha)
	for j, i := range tested {
		c := cs[i]
		if VerdictOf(*c) != Differs {
			continue
		}
		f.Before++
		if rej[j] {
			f.After++
			continue
		}
		c.Verdict, c.Significant, c.RoundsNeeded = Undecided, false, 0
		f.Demoted = append(f.Demoted, i)
	}
	return f
}
