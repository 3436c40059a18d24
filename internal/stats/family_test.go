package stats

import (
	"math"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestPEffectMatchesVerdict: PEffect < alpha exactly where the paired
// comparison differs (its interval clear of 1 ± MinEffect), over ratios
// from well inside to well outside the band.
func TestPEffectMatchesVerdict(t *testing.T) {
	for _, r := range []float64{0.5, 0.8, 0.9, 0.93, 0.96, 1, 1.04, 1.08, 1.1, 1.2, 2} {
		for _, spread := range []float64{0.01, 0.05, 0.2} {
			var a, b []float64
			for i, j := range []float64{1, -1, 0.5, -0.5, 0.2} {
				a = append(a, r*100*math.Exp(spread*j*float64(i%2*2-1)))
				b = append(b, 100)
			}
			c, ok := Paired(a, b, result.HigherBetter, Default)
			if !ok {
				t.Fatal("no comparison")
			}
			if got, want := PEffect(c) < c.Alpha, c.Verdict == Differs; got != want {
				t.Errorf("ratio %.2f spread %.2f: PEffect %.4f (p %.4f, [%.3f, %.3f]) but verdict %s", r, spread, PEffect(c), c.P, c.CILow, c.CIHigh, c.Verdict)
			}
		}
	}
}

// TestHolm: the textbook example (Holm 1979's step-down): with
// p = 0.01, 0.04, 0.03, 0.005 at 0.05, thresholds 0.0125, 0.0167, 0.025,
// 0.05 in order: 0.005 and 0.01 rejected, 0.03 not (above 0.025), so 0.04
// not either.
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005}, 0.05)
	want := []bool{true, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Holm %v, want %v", got, want)
		}
	}
}

// TestCorrectFamily: of two ratios that differ alone, the weaker is made
// undecided in a family of ten; the stronger stays.
func TestCorrectFamily(t *testing.T) {
	mk := func(lo, r, hi float64) *result.Comparison {
		c := &result.Comparison{Ratio: r, CILow: lo, CIHigh: hi, CILevel: 0.95, N: 5, Alpha: 0.05, MinEffect: 0.05, P: 0.001, Verdict: Differs, Significant: true, RoundsNeeded: 0}
		return c
	}
	cs := []*result.Comparison{mk(0.60, 0.70, 0.80), mk(0.80, 0.88, 0.94)}
	for range 8 {
		cs = append(cs, &result.Comparison{Ratio: 1, CILow: 0.9, CIHigh: 1.1, CILevel: 0.95, N: 5, Alpha: 0.05, MinEffect: 0.05, P: 0.9, Verdict: Undecided})
	}
	f := CorrectFamily(cs, 0.05)
	if f.Size != 10 || f.Before != 2 || f.After != 1 || len(f.Demoted) != 1 || f.Demoted[0] != 1 {
		t.Fatalf("family %+v, want 10 tested, 2 before, 1 after, the second demoted", f)
	}
	if cs[0].Verdict != Differs || cs[1].Verdict != Undecided || cs[1].Significant {
		t.Errorf("verdicts %s, %s", cs[0].Verdict, cs[1].Verdict)
	}
}
