package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestRatiosVerdicts: `report --ratio A:B` prints the paired ratio of two
// tools run side by side with its interval and the verdict's mark.
func TestRatiosVerdicts(t *testing.T) {
	base := []float64{1000, 1100, 900} // sockperf_tcp, per round
	tests := []struct {
		name   string
		factor []float64 // tcp_rr over sockperf_tcp, per round
		want   string
	}{
		{"differs", []float64{0.80, 0.81, 0.79}, " 0.80x [0.78, 0.83] "},
		{"equivalent", []float64{1.01, 0.99, 1.00}, " =1.00x [0.98, 1.03] "},
		{"undecided", []float64{0.809, 0.820, 0.899}, " ?0.84x [0.73, 0.97] "},
		{"one round", []float64{0.9}, " ?0.90x "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []result.Result
			for i, f := range tc.factor {
				for _, c := range []struct {
					wl string
					v  float64
				}{{"tcp_rr", base[i] * f}, {"sockperf_tcp", base[i]}} {
					rs = append(rs, result.Result{Network: "host", Placement: "cross-host", Workload: c.wl, Round: i + 1,
						Metrics: result.Metrics{TransactionsPerS: result.F(c.v)}})
				}
			}
			var b bytes.Buffer
			if err := Ratios(&b, &result.Run{Results: rs}, "tcp_rr", "sockperf_tcp"); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			row := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "host") {
					row = strings.Join(strings.Fields(l), " ") + " "
				}
			}
			if !strings.Contains(row, tc.want) {
				t.Errorf("row %q lacks %q:\n%s", row, tc.want, out)
			}
			for _, legend := range []string{"tcp_rr ÷ sockperf_tcp", "not the quotient", "no mark = differs", "= equivalent", "? undecided"} {
				if !strings.Contains(out, legend) {
					t.Errorf("legend lacks %q:\n%s", legend, out)
				}
			}
		})
	}
}
