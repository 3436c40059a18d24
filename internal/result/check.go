package result

import (
	"fmt"
	"math"
	"sort"
)

// MaxFileBytes bounds the results file Read accepts: decoding and
// summarizing take about 3.2 times a file's size in memory (a 234 MB file
// of 100,000 results: 747 MB for `cnperf report`, 762 MB for `cnperf
// recommend`; docs/validation.md), so 256 MB keeps a reader under about
// 850 MB, and no run of cnperf's writes a file near it (a 1,000-round
// run of the default suite is about 60 MB).
var MaxFileBytes int64 = 256 << 20

// Check refuses a run whose records cannot be true of any measurement: a
// rate that is not positive, a time or count below zero, a loss outside
// 0..1, a figure that is not a number (NaN, ±Inf), the same cell twice in
// one round (duplicated records would count as samples), or a summary
// that disagrees with the results it summarises. The error names the
// first offending record. Failed results (with an error) carry no
// figures to check.
func (r *Run) Check() error {
	type seenKey struct {
		cell  CellKey
		round int
	}
	seen := map[seenKey]int{}
	for i, res := range r.Results {
		where := fmt.Sprintf("results[%d] (%s)", i, describe(res))
		if res.Error == "" {
			if err := res.Metrics.check(); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			for j, f := range res.Flows {
				if err := f.check(); err != nil {
					return fmt.Errorf("%s flow %d: %v", where, j+1, err)
				}
			}
		}
		if res.Round > 0 {
			// every experiment names its variants in the cell (Step)
			k := seenKey{res.Key(), res.Round}
			if first, dup := seen[k]; dup {
				return fmt.Errorf("%s: the same cell and round as results[%d]; a duplicated record would count as a sample twice", where, first)
			}
			seen[k] = i
		}
	}
	return r.checkSummaries()
}

func describe(r Result) string {
	s := r.Network + " " + r.Placement + " " + r.Workload
	if r.Step != "" {
		s += " " + r.Step
	}
	if r.Backend != "" {
		s += " on " + r.Backend
	}
	if r.Round > 0 {
		s += fmt.Sprintf(" round %d", r.Round)
	}
	return s
}

// check is a result's figures against what a measurement can give.
func (m Metrics) check() error {
	positive := []struct {
		name string
		v    *float64
	}{{"throughput_bps", m.ThroughputBps}, {"transactions_per_s", m.TransactionsPerS}}
	for _, f := range positive {
		if f.v == nil {
			continue
		}
		if err := finite(f.name, *f.v); err != nil {
			return err
		}
		if *f.v <= 0 {
			return fmt.Errorf("%s is %v; a measured rate is positive (a cell that moved nothing is recorded as failed)", f.name, *f.v)
		}
	}
	nonNeg := []struct {
		name string
		v    *float64
	}{{"duration_s", m.DurationS}, {"client_cpu_s_per_s", m.ClientCPUSPerS}, {"server_cpu_s_per_s", m.ServerCPUSPerS}}
	for _, f := range nonNeg {
		if f.v == nil {
			continue
		}
		if err := finite(f.name, *f.v); err != nil {
			return err
		}
		if *f.v < 0 {
			return fmt.Errorf("%s is %v; it cannot be negative", f.name, *f.v)
		}
	}
	if m.LossRatio != nil {
		if err := finite("loss_ratio", *m.LossRatio); err != nil {
			return err
		}
		if *m.LossRatio < 0 || *m.LossRatio > 1 {
			return fmt.Errorf("loss_ratio is %v; a loss ratio lies in 0..1", *m.LossRatio)
		}
	}
	for _, c := range []struct {
		name string
		v    *int64
	}{{"transactions", m.Transactions}, {"bytes", m.Bytes}, {"messages", m.Messages}, {"errors", m.Errors}} {
		if c.v != nil && *c.v < 0 {
			return fmt.Errorf("%s is %d; a count cannot be negative", c.name, *c.v)
		}
	}
	for _, mp := range []struct {
		name string
		m    map[string]float64
	}{{"latency_us", m.LatencyUs}, {"startup_ms", m.StartupMs}, {"phases_ms", m.PhasesMs}} {
		for _, k := range sortedKeys(mp.m) {
			v := mp.m[k]
			if err := finite(mp.name+"."+k, v); err != nil {
				return err
			}
			if v < 0 {
				return fmt.Errorf("%s.%s is %v; a time cannot be negative", mp.name, k, v)
			}
			if v == 0 && mp.name == "latency_us" && isPercentile(k) {
				// no round trip takes no time: a zero percentile is a
				// lost measurement, and a ranking would call it the best
				return fmt.Errorf("%s.%s is 0; a measured latency percentile is positive (a cell that measured nothing is recorded as failed)", mp.name, k)
			}
		}
	}
	for _, k := range sortedKeys(m.Extra) {
		if err := finite("extra."+k, m.Extra[k]); err != nil {
			return err
		}
	}
	return nil
}

// isPercentile says a latency key names a percentile ("p50", "p99.9").
func isPercentile(k string) bool {
	if len(k) < 2 || k[0] != 'p' {
		return false
	}
	for _, c := range k[1:] {
		if (c < '0' || c > '9') && c != '.' && c != '_' {
			return false
		}
	}
	return true
}

func finite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s is %v, not a number a measurement gives", name, v)
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// checkSummaries refuses a summary that no reading of the results could
// give: more rounds than the cell has values, a median outside them, an
// interval that does not hold its median.
func (r *Run) checkSummaries() error {
	values := map[CellKey]map[string][]float64{}
	for _, res := range r.Results {
		if res.Error != "" {
			continue
		}
		k := res.Key()
		if values[k] == nil {
			values[k] = map[string][]float64{}
		}
		for _, f := range summaryFigures(r.Summaries, k) {
			if v, ok := res.Metrics.Value(f); ok {
				values[k][f] = append(values[k][f], v)
			}
		}
	}
	for i, s := range r.Summaries {
		where := fmt.Sprintf("summaries[%d] (%s %s %s %s)", i, s.Cell.Network, s.Cell.Placement, s.Cell.Workload, s.Figure)
		for _, v := range []float64{s.Median, s.CILow, s.CIHigh, s.CV} {
			if err := finite("a figure", v); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
		}
		vs := values[s.Cell][s.Figure]
		if s.N > len(vs) {
			return fmt.Errorf("%s: n is %d but the results hold %d values of it; the summary does not belong to these results", where, s.N, len(vs))
		}
		if len(vs) == 0 || s.N == 0 {
			continue
		}
		lo, hi := vs[0], vs[0]
		for _, v := range vs {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		tol := 1e-9 * math.Max(math.Abs(lo), math.Abs(hi))
		if s.Median < lo-tol || s.Median > hi+tol {
			return fmt.Errorf("%s: median %v lies outside the results' values (%v to %v); the summary does not belong to these results", where, s.Median, lo, hi)
		}
		if s.CILevel > 0 && (s.CILow > s.Median+tol || s.CIHigh < s.Median-tol) {
			return fmt.Errorf("%s: the interval %v..%v does not hold the median %v", where, s.CILow, s.CIHigh, s.Median)
		}
	}
	return nil
}

func summaryFigures(sums []Summary, k CellKey) []string {
	var out []string
	for _, s := range sums {
		if s.Cell == k {
			out = append(out, s.Figure)
		}
	}
	return out
}
