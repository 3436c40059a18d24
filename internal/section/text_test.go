package section

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// Rows keeps the first-seen order and makes a row once.
func TestRows(t *testing.T) {
	var r Rows[string, []int]
	made := 0
	mk := func() []int { made++; return []int{0} }
	for _, k := range []string{"b", "a", "b", "c", "a"} {
		v := r.Get(k, mk)
		*v = append(*v, 1)
	}
	if got := strings.Join(r.Keys, ","); got != "b,a,c" || made != 3 {
		t.Errorf("keys %q made %d, want b,a,c made 3", got, made)
	}
	if got := len(*r.Of("a")); got != 3 || r.Of("z") != nil {
		t.Errorf("a has %d values (want 3), z %v (want nil)", got, r.Of("z"))
	}
	var keys []string
	for k, v := range r.All() {
		keys = append(keys, k)
		if v != r.Of(k) {
			t.Errorf("All gave %s another row than Of", k)
		}
	}
	if strings.Join(keys, ",") != "b,a,c" {
		t.Errorf("All in order %v", keys)
	}
}

// A sweep's columns come sorted, its cells are the medians in the
// figure's unit ("-" for a hole), and At pairs two columns by round,
// leaving out the rounds where either is missing or 0.
func TestSweep(t *testing.T) {
	f := result.Figure{Key: "transactions_per_s", Label: "trans/s", Kind: result.KindRate}
	var s Sweep[string]
	s.Add("vxlan", 250, 1, 500)
	s.Add("vxlan", 10, 1, 1000)
	s.Add("vxlan", 10, 2, 1200)
	s.Add("vxlan", 250, 2, 0)
	s.Add("vxlan", 10, 3, 1100)
	s.Add("vxlan", 250, 3, 600)
	s.Add("bridge", 100, 1, 900)
	if got := s.Head(); got != "\t10\t100\t250" {
		t.Errorf("head %q", got)
	}
	if got := s.Medians("vxlan", f); got != "\t1100\t-\t500" {
		t.Errorf("vxlan cells %q, want the medians and a hole", got)
	}
	x, y := s.At("vxlan", 250, 10)
	if len(x) != 2 || x[3] != 600 || y[3] != 1100 || x[2] != 0 {
		t.Errorf("At: %v %v, want rounds 1 and 3", x, y)
	}
	if x, _ := s.At("host", 250, 10); len(x) != 0 {
		t.Errorf("At of an absent row: %v", x)
	}
	if got := strings.Join(s.Rows(), ","); got != "vxlan,bridge" {
		t.Errorf("rows %q", got)
	}
}

// Paired uses only the rounds both sides have; Factor and Percent print
// the verdict's mark and the interval low to high.
func TestPairedFactorPercent(t *testing.T) {
	x := map[int]float64{1: 2, 2: 2.2, 3: 1.8, 4: 9}
	y := map[int]float64{1: 1, 2: 1.1, 3: 0.9, 5: 1}
	c, ok := Paired(x, y, result.HigherBetter)
	if !ok || c.N != 3 || math.Abs(c.Ratio-2) > 1e-9 {
		t.Fatalf("Paired: %+v %v, want 3 pairs, ratio 2", c, ok)
	}
	if got := Factor(c); !strings.HasPrefix(got, "2.00") || strings.Contains(got, "x") {
		t.Errorf("Factor %q", got)
	}
	if got := PairedRatio(x, map[int]float64{9: 1}, result.HigherBetter); got != "-" {
		t.Errorf("PairedRatio with no common round: %q", got)
	}
	up := result.Comparison{Ratio: 0.8, CILow: 0.7, CIHigh: 0.9, CILevel: 0.95, Verdict: "undecided"}
	if got := Percent(up, func(r float64) float64 { return (1 - r) * 100 }, "%.1f"); got != "?20.0% [10.0, 30.0]" {
		t.Errorf("Percent %q", got)
	}
	if got := Percent(result.Comparison{Ratio: 1.1, Verdict: "undecided"}, func(r float64) float64 { return (r - 1) * 100 }, "%+.1f"); got != "?+10.0%" {
		t.Errorf("Percent without an interval %q", got)
	}
}

// TextTable writes a blank line, the title, and the head aligned with the
// rows.
func TestTextTable(t *testing.T) {
	var b bytes.Buffer
	tw := TextTable(&b, "title", "a\tbb")
	tw.Write([]byte("ccc\td\n"))
	tw.Flush()
	if got := b.String(); got != "\ntitle\na    bb\nccc  d\n" {
		t.Errorf("%q", got)
	}
}

// LinePoints sorts by x and aggregates; Param reads numbers of any form.
func TestLinePointsParam(t *testing.T) {
	pts := LinePoints(map[float64][]float64{1024: {4, 6}, 64: {1}}, Mean)
	if len(pts) != 2 || *pts[0].X != 64 || pts[1].Y != 5 {
		t.Errorf("points %+v", pts)
	}
	r := result.Result{Params: map[string]any{"a": 3.0, "b": 4, "c": "5", "d": "x"}}
	for k, want := range map[string]float64{"a": 3, "b": 4, "c": 5, "d": 0, "e": 0} {
		if got := Param(r, k); got != want {
			t.Errorf("Param %s = %v, want %v", k, got, want)
		}
	}
	if m, ok := MedianOK(nil); ok || m != 0 {
		t.Error("MedianOK of none")
	}
	if StepWithout("services=10 size=64", "services=") != "size=64" {
		t.Error("StepWithout")
	}
}
