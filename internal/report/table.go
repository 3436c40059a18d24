// Package report renders results. It reads only the result schema, so it
// works as well on a JSON file written by another cnperf run.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

type rowKey struct{ network, placement, lb string }

// column is one figure of one workload.
type column struct {
	workload string
	title    string
	get      func(result.Metrics) (float64, bool)
	format   func(float64) string
	ratio    bool // show the ratio to baseline
}

func tput(m result.Metrics) (float64, bool) {
	if m.ThroughputBps == nil {
		return 0, false
	}
	return *m.ThroughputBps, true
}
func tps(m result.Metrics) (float64, bool) {
	if m.TransactionsPerS == nil {
		return 0, false
	}
	return *m.TransactionsPerS, true
}
func lat(key string) func(result.Metrics) (float64, bool) {
	return func(m result.Metrics) (float64, bool) {
		v, ok := m.LatencyUs[key]
		return v, ok
	}
}
func loss(m result.Metrics) (float64, bool) {
	if m.LossRatio == nil {
		return 0, false
	}
	return *m.LossRatio, true
}

func gbps(v float64) string { return fmt.Sprintf("%.2f", v/1e9) }
func count(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
func usec(v float64) string { return fmt.Sprintf("%.1f", v) }
func pct(v float64) string  { return fmt.Sprintf("%.2f%%", v*100) }

func columnsFor(workload string) []column {
	switch {
	case strings.HasSuffix(workload, "_stream") || strings.HasPrefix(workload, "iperf3"):
		cs := []column{{workload, workload + " Gbit/s", tput, gbps, true}}
		if strings.HasPrefix(workload, "udp") {
			cs = append(cs, column{workload, "loss", loss, pct, false})
		}
		return cs
	case strings.HasSuffix(workload, "_rr") || strings.HasSuffix(workload, "_crr") || strings.HasPrefix(workload, "sockperf"):
		return []column{
			{workload, workload + " trans/s", tps, count, true},
			{workload, "p50 us", lat("p50"), usec, false},
			{workload, "p99 us", lat("p99"), usec, false},
		}
	}
	if workload == "startup" {
		return startupColumns(workload)
	}
	if cs := loadColumns(workload); cs != nil {
		return cs
	}
	return []column{{workload, workload + " trans/s", tps, count, true}}
}

// Table writes a row per network and placement, a column per figure, each
// headline figure followed by its ratio to the baseline in the same
// placement. Repeated measurements are averaged; n>1 adds the spread. Steps
// of multi-step workloads (a rate ladder, a size sweep) get a table each.
func Table(w io.Writer, run *result.Run) {
	var steps []string
	byStep := map[string][]result.Result{}
	for _, r := range run.Results {
		if _, ok := byStep[r.Step]; !ok {
			steps = append(steps, r.Step)
		}
		byStep[r.Step] = append(byStep[r.Step], r)
	}
	searchSteps := 0
	for i, st := range steps {
		if searchStep(st) {
			searchSteps++
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if st != "" {
			fmt.Fprintf(w, "== %s ==\n", st)
		}
		table(w, byStep[st])
	}
	if searchSteps > 0 {
		fmt.Fprintf(w, "(%d steps of the max-rate search are in the JSON, not shown)\n", searchSteps)
	}
	if anySaturated(run) {
		fmt.Fprintln(w, SaturationNote)
	}
	Services(w, run)
	for _, s := range run.Skipped {
		what := s.Network
		if s.Placement != "" {
			what += " " + s.Placement
		}
		fmt.Fprintf(w, "skipped %s: %s\n", what, s.Reason)
	}
	fmt.Fprintln(w, "(x) is the ratio to baseline in the same placement: above 1 is more throughput or transactions.")
}

func table(w io.Writer, results []result.Result) {
	var keys []rowKey
	seen := map[rowKey]bool{}
	var workloads []string
	wseen := map[string]bool{}
	vals := map[rowKey]map[string][]result.Metrics{}
	errs := map[rowKey]map[string]string{}
	for _, r := range results {
		k := rowKey{r.Network, r.Placement, r.LB}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
			vals[k] = map[string][]result.Metrics{}
			errs[k] = map[string]string{}
		}
		if !wseen[r.Workload] {
			wseen[r.Workload] = true
			workloads = append(workloads, r.Workload)
		}
		if r.Error != "" {
			errs[k][r.Workload] = r.Error
			continue
		}
		vals[k][r.Workload] = append(vals[k][r.Workload], r.Metrics)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		return placementOrder(keys[i].placement) < placementOrder(keys[j].placement)
	})
	var cols []column
	for _, wl := range workloads {
		cols = append(cols, columnsFor(wl)...)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"network", "placement"}
	for _, c := range cols {
		head = append(head, c.title)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var notes []string
	for _, k := range keys {
		row := []string{k.network, k.placement}
		if k.lb != "" {
			row[0] += " lb=" + k.lb
		}
		base := rowKey{"baseline", k.placement, ""}
		for _, c := range cols {
			if e := errs[k][c.workload]; e != "" && len(vals[k][c.workload]) == 0 {
				row = append(row, "error")
				notes = append(notes, fmt.Sprintf("%s %s %s: %s", k.network, k.placement, c.workload, e))
				errs[k][c.workload] = "" // note once
				continue
			}
			v, sd, n, ok := mean(vals[k][c.workload], c.get)
			if !ok {
				row = append(row, "-")
				continue
			}
			cell := c.format(v)
			if mk := marks[c.workload+" "+c.title]; mk != nil {
				cell += mk(vals[k][c.workload][0])
			}
			if n > 1 {
				cell += fmt.Sprintf("±%.0f%%", 100*sd/math.Max(v, 1e-12))
			}
			if c.ratio {
				if b, _, _, ok := mean(vals[base][c.workload], c.get); ok && b > 0 {
					cell += fmt.Sprintf(" (%.2fx)", v/b)
				}
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, "error: "+n)
	}
}

func placementOrder(p string) int {
	switch p {
	case "same-pod":
		return 0
	case "same-host":
		return 1
	}
	return 2
}

func mean(ms []result.Metrics, get func(result.Metrics) (float64, bool)) (avg, sd float64, n int, ok bool) {
	var sum, sq float64
	for _, m := range ms {
		if v, ok := get(m); ok {
			sum += v
			sq += v * v
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	avg = sum / float64(n)
	if n > 1 {
		sd = math.Sqrt(math.Max(0, (sq-float64(n)*avg*avg)/float64(n-1)))
	}
	return avg, sd, n, true
}

// anySaturated says whether a tabled load step did not hold its rate.
func anySaturated(run *result.Run) bool {
	for _, r := range run.Results {
		if v, _ := saturation(r.Metrics); v != satNo && !searchStep(r.Step) {
			return true
		}
	}
	return false
}
