package blocking

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestBlockingVerdicts: both of the blocking table's differences to the
// baseline (blocking and connect time) carry a mark: none when the
// interval is clear of 0, "?" when it spans 0 or there is none.
func TestBlockingVerdicts(t *testing.T) {
	tests := []struct {
		name          string
		diffs, cdiffs []float64 // per round, us
		ci            float64   // the one round's interval from its requests
		want          string    // "blocking-diff | connect-diff"
	}{
		{"both differ", []float64{100, 110, 90}, []float64{50, 52, 48}, 0, "+100 [+78, +128] | +50 [+45, +55]"},
		{"both span 0", []float64{100, -110, 10}, []float64{50, -52, 8}, 0, "?+10 [-262, +262] | ?+8 [-125, +129]"},
		{"one round: blocking from its requests, connect has no interval", []float64{100}, []float64{50}, 20, "+100 [+80, +120] | ?+50"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []result.Result
			for i := range tc.diffs {
				m := result.Metrics{Transactions: new(int64), LatencyUs: map[string]float64{"mean": 1000, "p99": 3000},
					Extra: map[string]float64{result.ExtraBlockingDiff: tc.diffs[i], result.ExtraBlockingDiffCI: tc.ci, result.ExtraConnectDiff: tc.cdiffs[i], result.ExtraConnectMean: 200}}
				rs = append(rs, result.Result{Network: "bridge", Placement: "same-host", Workload: Name, Round: i + 1, Metrics: m})
			}
			var b bytes.Buffer
			Text(&b, &result.Run{Results: rs})
			out := b.String()
			var row []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "bridge") {
					row = strings.Split(strings.Join(strings.Fields(l), " "), " ")
				}
			}
			got := strings.Join(row, " ")
			want := strings.Split(tc.want, " | ")
			if !strings.Contains(got, " "+want[0]+" ") || !strings.Contains(got, " "+want[1]+" ") {
				t.Errorf("row %q lacks %q and %q:\n%s", got, want[0], want[1], out)
			}
			if !strings.Contains(out, "no mark: differs (the interval clear of 0); ? undecided") {
				t.Errorf("legend lacks the marks:\n%s", out)
			}
		})
	}
}
