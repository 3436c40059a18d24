package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func rr(net, pl string, tps float64) result.Result {
	return result.Result{Network: net, Workload: "tcp_rr", Placement: pl, Metrics: result.Metrics{
		TransactionsPerS: result.F(tps), LatencyUs: map[string]float64{"p50": 10, "p99": 20, "max": 30},
	}}
}

func stream(net, pl string, bps float64) result.Result {
	return result.Result{Network: net, Workload: "tcp_stream", Placement: pl, Metrics: result.Metrics{ThroughputBps: result.F(bps)}}
}

func TestTableRatiosAndOrder(t *testing.T) {
	run := &result.Run{Results: []result.Result{
		rr("baseline", "cross-host", 20000), stream("baseline", "cross-host", 2e9),
		rr("vxlan", "cross-host", 10000), stream("vxlan", "cross-host", 0.5e9),
		rr("baseline", "same-host", 40000),
		{Network: "nat", Workload: "tcp_rr", Placement: "cross-host", Error: "client: boom"},
	}, Skipped: []result.Skip{{Network: "ipvlan", Reason: "needs CONFIG_IPVLAN"}}}
	var b bytes.Buffer
	Table(&b, run)
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[1], "baseline  same-host") {
		t.Errorf("same-host rows must come first:\n%s", out)
	}
	for _, want := range []string{"10.0k (0.50x)", "0.50 (0.25x)", "error: nat cross-host tcp_rr: client: boom", "skipped ipvlan: needs CONFIG_IPVLAN"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestRepeatsShowSpread(t *testing.T) {
	run := &result.Run{Results: []result.Result{rr("host", "cross-host", 900), rr("host", "cross-host", 1100)}}
	var b bytes.Buffer
	Table(&b, run)
	if !strings.Contains(b.String(), "1000±14%") {
		t.Errorf("want mean±sd of repeats:\n%s", b.String())
	}
}

func TestStepsGetTheirOwnTable(t *testing.T) {
	a, c := rr("host", "cross-host", 1), rr("host", "cross-host", 2)
	a.Step, c.Step = "rate=100", "rate=200"
	var b bytes.Buffer
	Table(&b, &result.Run{Results: []result.Result{a, c}})
	if !strings.Contains(b.String(), "== rate=100 ==") || !strings.Contains(b.String(), "== rate=200 ==") {
		t.Errorf("want one table per step:\n%s", b.String())
	}
}

func TestAbsentMetricsAreAbsent(t *testing.T) {
	b, err := json.Marshal(stream("host", "cross-host", 1e9).Metrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"loss_ratio", "transactions_per_s", "latency_us"} {
		if strings.Contains(string(b), k) {
			t.Errorf("tcp_stream metrics carry %s: %s", k, b)
		}
	}
}
