package report

import (
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// searchStep says a step is part of a max-rate search: its rate differs
// per network, so a table of it compares nothing; the ladder that follows
// it is the study's table.
func searchStep(label string) bool { return strings.HasPrefix(label, "search ") }

// marks suffix a cell, by workload and column title: "*" when too few
// samples back a percentile.
var marks = map[string]func(result.Metrics) string{}

func mark(c column, f func(result.Metrics) string) column {
	marks[c.workload+" "+c.title] = f
	return c
}

// loadColumns are the seed-000 table's columns for the load workloads:
// achieved rate, the latency spectrum to p99.999 and max, and whether the
// step held its rate. A saturated step's latencies are not valid and show
// as "-"; a percentile with too few samples behind it is marked "*".
func loadColumns(workload string) []column {
	switch workload {
	case "http_rate", "tcp_rate":
		cs := []column{{workload: workload, title: workload + " rate/s", get: extra("achieved_rps"), format: count}}
		for _, k := range []string{"p50", "p95", "p99", "p99.5", "p99.9", "p99.99", "p99.999", "max"} {
			cs = append(cs, mark(column{workload: workload, title: k + " us", get: validLat(k), format: usec}, insignificant(k)))
		}
		return append(cs, column{workload: workload, title: "samples", get: extra("samples"), format: count},
			column{workload: workload, title: "saturated", get: saturation, format: saturatedBy})
	case "http_qps":
		cs := []column{{workload: workload, title: workload + " req/s", get: tps, format: count, ratio: true}}
		for _, k := range []string{"p50", "p99", "p99.9", "max"} {
			cs = append(cs, mark(column{workload: workload, title: k + " us", get: lat(k), format: usec}, insignificant(k)))
		}
		return append(cs, column{workload: workload, title: "errors", get: errCount, format: count})
	}
	return nil
}

func extra(key string) func(result.Metrics) (float64, bool) {
	return func(m result.Metrics) (float64, bool) {
		v, ok := m.Extra[key]
		return v, ok
	}
}

// validLat is a latency percentile, absent when the step was saturated.
func validLat(key string) func(result.Metrics) (float64, bool) {
	return func(m result.Metrics) (float64, bool) {
		if m.Extra["saturated"] == 1 {
			return 0, false
		}
		v, ok := m.LatencyUs[key]
		return v, ok
	}
}

func insignificant(key string) func(result.Metrics) string {
	return func(m result.Metrics) string {
		if m.Extra["insignificant_"+key] == 1 {
			return "*"
		}
		return ""
	}
}

func errCount(m result.Metrics) (float64, bool) {
	if m.Errors == nil {
		return 0, true
	}
	return float64(*m.Errors), true
}

// Saturation codes: why a step did not hold its rate, as far as the
// engine could tell (loadgen's conns_busy_pct).
const (
	satNo     = 0
	satYes    = 1 // no cause recorded (results from before conns_busy_pct)
	satClient = 2 // a connection was always free: the client thread was late
	satServer = 3 // every connection was busy while requests were due
)

func saturation(m result.Metrics) (float64, bool) {
	v, ok := m.Extra["saturated"]
	if !ok || v != 1 {
		return satNo, ok
	}
	b, ok := m.Extra["conns_busy_pct"]
	switch {
	case !ok:
		return satYes, true
	case b >= 0.1:
		return satServer, true
	}
	return satClient, true
}

// SaturationNote explains the saturated column's causes under a table.
const SaturationNote = "saturated: YES server = every connection was busy while requests were due (the server did not keep up, or too few --connections); YES client = a connection was free, the client thread was late (its CPU busy or descheduled; `cnperf load pace` shows this machine's floor)"

func saturatedBy(v float64) string {
	switch v {
	case satYes:
		return "YES"
	case satClient:
		return "YES client"
	case satServer:
		return "YES server"
	}
	return "no"
}
