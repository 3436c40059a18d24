package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func TestLoadColumns(t *testing.T) {
	lat := map[string]float64{"p50": 40, "p95": 50, "p99": 60, "p99.5": 70, "p99.9": 80, "p99.99": 90, "p99.999": 100, "max": 110}
	run := &result.Run{Results: []result.Result{
		{Network: "host", Workload: "http_rate", Placement: "cross-host", Step: "load=20% of max size=350",
			Metrics: result.Metrics{LatencyUs: lat, Extra: map[string]float64{"achieved_rps": 20000, "saturated": 0, "insignificant_p99.999": 1, "samples": 40000}}},
		{Network: "vxlan", Workload: "http_rate", Placement: "cross-host", Step: "load=20% of max size=350",
			Metrics: result.Metrics{LatencyUs: lat, Extra: map[string]float64{"achieved_rps": 15000, "saturated": 1, "conns_busy_pct": 42}}},
		{Network: "macvlan", Workload: "http_rate", Placement: "cross-host", Step: "load=20% of max size=350",
			Metrics: result.Metrics{LatencyUs: lat, Extra: map[string]float64{"achieved_rps": 20000, "saturated": 1, "conns_busy_pct": 0}}},
		{Network: "vxlan", Workload: "http_rate", Placement: "cross-host", Step: "search size=350 step=1",
			Metrics: result.Metrics{LatencyUs: lat, Extra: map[string]float64{"achieved_rps": 1000}}},
	}}
	var b bytes.Buffer
	Table(&b, run)
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "p99.999 us") || !strings.Contains(lines[1], "saturated") || !strings.Contains(lines[2], "40.0k") {
		t.Fatalf("header %q lacks the tail columns", lines[1])
	}
	if strings.Contains(out, "search size") || !strings.Contains(out, "1 steps of the max-rate search") {
		t.Errorf("search steps must be summarised, not tabled")
	}
	host, vx := lines[2], lines[3]
	if !strings.Contains(host, "100.0*") || !strings.Contains(host, "99.99") && !strings.Contains(host, " no") {
		t.Errorf("host row %q: want p99.999 marked not significant and not saturated", host)
	}
	if strings.Contains(vx, "40.0") || !strings.Contains(vx, "YES server") || !strings.Contains(vx, "15.0k") {
		t.Errorf("vxlan row %q: a saturated step must show no latency, YES with its cause, and its achieved rate", vx)
	}
	if mv := lines[4]; !strings.Contains(mv, "YES client") {
		t.Errorf("macvlan row %q: a connection was always free, so the client was late", mv)
	}
	if !strings.Contains(out, "YES client = a connection was free") {
		t.Error("no note explains the saturated column")
	}
}
