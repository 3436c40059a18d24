// Package stats holds cnperf's statistics: the central value of a cell over
// interleaved rounds with its confidence interval, and comparisons of two
// cells (paired by round) or two runs (unpaired), with a significance
// verdict. Everything here is pure: numbers and result types in, numbers and
// result types out, no I/O.
package stats

import (
	"math"
	"sync"
)

// RegIncBeta is the regularized incomplete beta function I_x(a, b), for
// a, b > 0 and 0 <= x <= 1: the continued fraction of Numerical Recipes
// (modified Lentz), evaluated on the side of x where it converges fast.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case math.IsNaN(x) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 500
		eps     = 1e-15
		tiny    = 1e-300
	)
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 / clamp(1-qab*x/qap)
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 / clamp(1+aa*d)
		c = clamp(1 + aa/c)
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 / clamp(1+aa*d)
		c = clamp(1 + aa/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// TCDF is P(T <= t) for Student's t distribution with df > 0 degrees of
// freedom (df need not be an integer: Welch's test makes fractional ones).
func TCDF(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := 0.5 * RegIncBeta(df/2, 0.5, df/(df+t*t)) // P(T > |t|)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// tTwoSided is P(|T| >= |t|), computed without the cancellation of
// 1 - TCDF for large t.
func tTwoSided(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	return RegIncBeta(df/2, 0.5, df/(df+t*t))
}

var quantileCache struct {
	sync.Mutex
	m map[[2]float64]float64
}

// TQuantile is the t with TCDF(t, df) = p, for 0 < p < 1 and df > 0, by
// bisection (to the last bits of a float64). Results are cached: the same
// few quantiles are asked for over and over.
func TQuantile(p, df float64) float64 {
	if math.IsNaN(p) || p <= 0 || p >= 1 || df <= 0 {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	key := [2]float64{p, df}
	quantileCache.Lock()
	q, ok := quantileCache.m[key]
	quantileCache.Unlock()
	if ok {
		return q
	}
	target := 2 * (1 - p) // P(|T| >= q)
	lo, hi := 0.0, 1.0
	for tTwoSided(hi, df) > target {
		lo, hi = hi, hi*2
		if hi > 1e300 {
			break
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if tTwoSided(mid, df) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	q = (lo + hi) / 2
	quantileCache.Lock()
	if quantileCache.m == nil || len(quantileCache.m) > 4096 {
		quantileCache.m = map[[2]float64]float64{}
	}
	quantileCache.m[key] = q
	quantileCache.Unlock()
	return q
}

// binomCDF is P(X <= k) for X ~ Binomial(n, 1/2).
func binomHalfCDF(k, n int) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	ln, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := 0; i <= k; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(ln - li - lni - float64(n)*math.Ln2)
	}
	return sum
}

// RegIncGamma is the regularized lower incomplete gamma function P(a, x),
// for a > 0 and x >= 0: its series below a+1, its continued fraction
// (modified Lentz) above, as in Numerical Recipes.
func RegIncGamma(a, x float64) float64 {
	switch {
	case math.IsNaN(x) || a <= 0 || x < 0:
		return math.NaN()
	case x == 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(a*math.Log(x) - x - lg)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return front * sum
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return 1 - front*h
}

// ChiSquareCDF is P(X <= x) for X chi-square with df > 0 degrees of freedom.
func ChiSquareCDF(x, df float64) float64 {
	if x <= 0 {
		return 0
	}
	return RegIncGamma(df/2, x/2)
}

// ChiSquareQuantile is the x with ChiSquareCDF(x, df) = p, for 0 < p < 1,
// by bisection.
func ChiSquareQuantile(p, df float64) float64 {
	if math.IsNaN(p) || p <= 0 || p >= 1 || df <= 0 {
		return math.NaN()
	}
	lo, hi := 0.0, math.Max(1, df)
	for ChiSquareCDF(hi, df) < p {
		lo, hi = hi, hi*2
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if ChiSquareCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
