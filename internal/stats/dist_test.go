package stats

import (
	"math"
	"testing"
)

func TestTCDFClosedForms(t *testing.T) {
	for _, x := range []float64{-30, -4.3, -1, -0.2, 0, 0.3, 1, 2.5, 12.7, 100} {
		// df 1 is the Cauchy distribution, df 2 has a closed form too.
		if got, want := TCDF(x, 1), 0.5+math.Atan(x)/math.Pi; math.Abs(got-want) > 1e-12 {
			t.Errorf("TCDF(%g, 1) = %.15g, want %.15g", x, got, want)
		}
		if got, want := TCDF(x, 2), 0.5+x/(2*math.Sqrt(2+x*x)); math.Abs(got-want) > 1e-12 {
			t.Errorf("TCDF(%g, 2) = %.15g, want %.15g", x, got, want)
		}
	}
}

func TestTQuantileTable(t *testing.T) {
	// Two-sided 95 % critical values from any t table.
	cases := []struct{ df, want float64 }{
		{1, 12.7062047}, {2, 4.30265273}, {3, 3.18244631}, {4, 2.77644511},
		{5, 2.57058184}, {9, 2.26215716}, {14, 2.14478669}, {30, 2.04227246}, {1000, 1.96233908},
	}
	for _, c := range cases {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("TQuantile(0.975, %g) = %.8f, want %.8f", c.df, got, c.want)
		}
		if got := TQuantile(0.025, c.df); math.Abs(got+c.want) > 1e-6 {
			t.Errorf("TQuantile(0.025, %g) = %.8f, want %.8f", c.df, got, -c.want)
		}
	}
	// Fractional df (Welch) and round trips.
	for _, df := range []float64{1.3, 2.7, 7.5, 40.2} {
		for _, p := range []float64{0.001, 0.05, 0.3, 0.5, 0.9, 0.995} {
			q := TQuantile(p, df)
			if got := TCDF(q, df); math.Abs(got-p) > 1e-10 {
				t.Errorf("TCDF(TQuantile(%g, %g)) = %g", p, df, got)
			}
		}
	}
	for _, bad := range [][2]float64{{0, 3}, {1, 3}, {0.5, 0}, {math.NaN(), 2}} {
		if q := TQuantile(bad[0], bad[1]); !math.IsNaN(q) {
			t.Errorf("TQuantile(%v) = %g, want NaN", bad, q)
		}
	}
}

func TestRegIncBeta(t *testing.T) {
	// I_x(a, 1) = x^a and I_x(1, b) = 1 - (1-x)^b.
	for _, x := range []float64{0.01, 0.2, 0.5, 0.77, 0.999} {
		for _, a := range []float64{0.5, 1, 2.5, 10} {
			if got, want := RegIncBeta(a, 1, x), math.Pow(x, a); math.Abs(got-want) > 1e-12 {
				t.Errorf("I_%g(%g, 1) = %g, want %g", x, a, got, want)
			}
			if got, want := RegIncBeta(1, a, x), 1-math.Pow(1-x, a); math.Abs(got-want) > 1e-12 {
				t.Errorf("I_%g(1, %g) = %g, want %g", x, a, got, want)
			}
		}
	}
	if RegIncBeta(2, 3, 0) != 0 || RegIncBeta(2, 3, 1) != 1 {
		t.Error("ends")
	}
}

func TestBinomHalfCDF(t *testing.T) {
	if got := binomHalfCDF(1, 10); math.Abs(got-11.0/1024) > 1e-14 {
		t.Errorf("P(Bin(10) <= 1) = %g", got)
	}
	if got := binomHalfCDF(5, 20); math.Abs(got-21700.0/1048576) > 1e-14 {
		t.Errorf("P(Bin(20) <= 5) = %g", got)
	}
}
