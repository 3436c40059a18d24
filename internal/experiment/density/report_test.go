package density

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestDensityVerdicts: the density table's largest-against-smallest ratio
// is the paired one, with the main table's verdict marks and legend.
func TestDensityVerdicts(t *testing.T) {
	base := []float64{1000, 1100, 900} // tcp_rr at 10 idle pods, per round
	tests := []struct {
		name   string
		factor []float64 // at 250 over at 10, per round
		want   string
	}{
		{"differs", []float64{0.50, 0.51, 0.49}, "0.50x [0.48, 0.53]"},
		{"equivalent", []float64{1.01, 0.99, 1.00}, "=1.00x [0.98, 1.03]"},
		{"undecided, p<0.05 but the interval reaches 0.95", []float64{0.809, 0.820, 0.899}, "?0.84x [0.73, 0.97]"},
		{"one round", []float64{0.5}, "?0.50x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []result.Result
			for i, f := range tc.factor {
				for _, c := range []struct {
					step string
					v    float64
				}{{"density=10", base[i]}, {"density=250", base[i] * f}} {
					rs = append(rs, result.Result{Network: "vxlan", Placement: "cross-host", Workload: "tcp_rr", Step: c.step, Round: i + 1,
						Metrics: result.Metrics{TransactionsPerS: result.F(c.v)}})
				}
			}
			var b bytes.Buffer
			Text(&b, &result.Run{Results: rs})
			out := b.String()
			var row string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "tcp_rr trans/s") {
					row = strings.Join(strings.Fields(l), " ")
				}
			}
			if !strings.HasSuffix(row, " "+tc.want) {
				t.Errorf("row %q does not end in %q:\n%s", row, tc.want, out)
			}
			for _, legend := range []string{"geometric mean of the rounds' ratios", "not the quotient", "no mark = differs", "= equivalent", "? undecided"} {
				if !strings.Contains(out, legend) {
					t.Errorf("legend lacks %q:\n%s", legend, out)
				}
			}
			if strings.Contains(out, "≈") {
				t.Errorf("the retired ≈ mark:\n%s", out)
			}
		})
	}
}
