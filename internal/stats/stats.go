package stats

import (
	"math"
	"slices"
)

// The interval methods, as recorded in Summary.CIMethod.
const (
	// MethodNone: fewer than 2 samples, no interval (CILevel is 0).
	MethodNone = "none"
	// MethodLogT: Student's t interval of the mean of the logarithms,
	// exponentiated. Under log-normal noise (what throughput, rates and
	// latencies show: multiplicative, positive) the geometric mean is the
	// median, so this bounds the median, and it is exact for any n >= 2
	// (its width grows with t(n-1): ×4.3 the standard error at n = 3, not
	// the 1.96 that would pretend to know the spread). Widened, if needed,
	// to contain the sample median, so the point printed is always inside.
	MethodLogT = "log-t"
	// MethodT: the same on the linear scale, for figures with a value <= 0
	// (a loss ratio of 0), where there is no logarithm.
	MethodT = "t"
	// MethodOrder: distribution-free, from n >= OrderStatMinN: the order
	// statistics x(k) and x(n+1-k) with the largest k whose binomial
	// coverage of the median is still at least the level. Needs no
	// assumption about the noise, so one disturbed round cannot widen it
	// much; below 15 samples it would be [min, max] or close to it.
	MethodOrder = "order-statistics"
)

// OrderStatMinN is the sample size from which Interval is distribution-free.
const OrderStatMinN = 15

// Median of xs (NaN for none). xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// StdDev is the sample standard deviation (n-1), 0 for fewer than 2.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// CV is the coefficient of variation, StdDev / |Mean|: 0 for fewer than 2
// samples or a mean of 0, where it means nothing.
func CV(xs []float64) float64 {
	m := Mean(xs)
	if len(xs) < 2 || m == 0 {
		return 0
	}
	return StdDev(xs) / math.Abs(m)
}

func allPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// Interval is a confidence interval at level (e.g. 0.95) for the central
// value of xs, and the method that made it (see the Method constants).
// Fewer than 2 samples give no interval: lo = hi = 0, MethodNone.
func Interval(xs []float64, level float64) (lo, hi float64, method string) {
	n := len(xs)
	if n < 2 || !(level > 0 && level < 1) {
		return 0, 0, MethodNone
	}
	med := Median(xs)
	if n >= OrderStatMinN {
		if lo, hi, ok := orderInterval(xs, level); ok {
			return lo, hi, MethodOrder
		}
	}
	q := TQuantile(1-(1-level)/2, float64(n-1))
	if allPositive(xs) {
		l := logs(xs)
		m, se := Mean(l), StdDev(l)/math.Sqrt(float64(n))
		lo, hi = math.Exp(m-q*se), math.Exp(m+q*se)
		method = MethodLogT
	} else {
		m, se := Mean(xs), StdDev(xs)/math.Sqrt(float64(n))
		lo, hi = m-q*se, m+q*se
		method = MethodT
	}
	return math.Min(lo, med), math.Max(hi, med), method
}

// orderInterval is the distribution-free interval for the median.
func orderInterval(xs []float64, level float64) (lo, hi float64, ok bool) {
	n := len(xs)
	k := 0 // 1-based: [x(k), x(n+1-k)] covers the median with 1-2*P(B<=k-1)
	// P(B<=c-1) summed term by term as c grows, in binomHalfCDF's order
	// (the same sums): calling it for each c was quadratic in n
	ln, _ := math.Lgamma(float64(n + 1))
	cdf := 0.0
	for c := 1; c <= n/2; c++ {
		i := c - 1
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		cdf += math.Exp(ln - li - lni - float64(n)*math.Ln2)
		if 1-2*cdf >= level {
			k = c
		} else {
			break
		}
	}
	if k == 0 {
		return 0, 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[k-1], s[n-k], true
}
