package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

// headline is a workload's main figure: throughput, else transactions/s.
func headline(m result.Metrics) (float64, string, bool) {
	if m.ThroughputBps != nil {
		return *m.ThroughputBps, "bit/s", true
	}
	if m.TransactionsPerS != nil {
		return *m.TransactionsPerS, "trans/s", true
	}
	return 0, "", false
}

// Ratios prints, per network and placement, workload a's headline figure
// over workload b's (means over repeats), and the same for the p50 latency
// when both have one: how two tools measured side by side in one run compare.
func Ratios(w io.Writer, run *result.Run, a, b string) error {
	type acc struct {
		sum, p50 float64
		n, np    int
	}
	vals := map[rowKey]map[string]*acc{}
	var keys []rowKey
	for _, r := range run.Results {
		if r.Error != "" || (r.Workload != a && r.Workload != b) {
			continue
		}
		k := rowKey{r.Network, r.Placement, r.LB, r.Backend}
		if vals[k] == nil {
			vals[k] = map[string]*acc{}
			keys = append(keys, k)
		}
		if vals[k][r.Workload] == nil {
			vals[k][r.Workload] = &acc{}
		}
		x := vals[k][r.Workload]
		if v, _, ok := headline(r.Metrics); ok {
			x.sum += v
			x.n++
		}
		if v, ok := r.Metrics.LatencyUs["p50"]; ok {
			x.p50 += v
			x.np++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "network\tplacement\t%s\t%s\tratio\tp50 ratio\n", a, b)
	found := false
	for _, k := range keys {
		x, y := vals[k][a], vals[k][b]
		if x == nil || y == nil || x.n == 0 || y.n == 0 {
			continue
		}
		found = true
		xa, ya := x.sum/float64(x.n), y.sum/float64(y.n)
		p50 := "-"
		if x.np > 0 && y.np > 0 {
			p50 = fmt.Sprintf("%.2f", (x.p50/float64(x.np))/(y.p50/float64(y.np)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%.2f\t%s\n", k.network, k.placement, xa, ya, xa/ya, p50)
	}
	tw.Flush()
	if !found {
		return fmt.Errorf("no network has results for both %s and %s", a, b)
	}
	return nil
}
