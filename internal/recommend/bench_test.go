package recommend

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// bigRun is a run of n results: networks × steps × rounds of tcp_rr cells
// (a long rate ladder), the shape that made recommend quadratic (issue 34).
func bigRun(n int) *result.Run {
	rng := rand.New(rand.NewSource(1))
	nets := []string{"baseline", "host", "bridge", "vxlan", "host-gw", "ipip", "bgp", "macvlan", "ipvlan", "overlay"}
	const rounds = 5
	steps := n / (len(nets) * rounds)
	run := &result.Run{Schema: result.Schema, Rounds: rounds}
	for round := 1; round <= rounds; round++ {
		for s := 0; s < steps; s++ {
			for i, nw := range nets {
				j := func(v float64) float64 { return v * (1 + 0.05*(2*rng.Float64()-1)) }
				r := result.Result{Network: nw, Workload: "tcp_rr", Placement: "cross-host", Round: round, Step: fmt.Sprintf("rate=%d", 1000*(s+1))}
				base := 10000 * (1 - 0.03*float64(i))
				r.Metrics.TransactionsPerS = result.F(j(base))
				r.Metrics.LatencyUs = map[string]float64{"p50": j(100 / (1 - 0.03*float64(i))), "p99": j(200 / (1 - 0.03*float64(i)))}
				run.Results = append(run.Results, r)
			}
		}
	}
	return run
}

// BenchmarkRank: go test ./internal/recommend -run '^$' -bench Rank -benchmem
func BenchmarkRank(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		run := bigRun(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Rank(run, "latency", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteBigRun writes bigRun(N) to $CNPERF_BIGRUN for timing the
// commands on a large file (docs/validation.md):
//
//	CNPERF_BIGRUN=/tmp/big.json CNPERF_BIGRUN_N=10000 go test ./internal/recommend -run TestWriteBigRun
func TestWriteBigRun(t *testing.T) {
	path := os.Getenv("CNPERF_BIGRUN")
	if path == "" {
		t.Skip("set CNPERF_BIGRUN=FILE (and CNPERF_BIGRUN_N, default 10000) to write a large run")
	}
	n, err := strconv.Atoi(cmp.Or(os.Getenv("CNPERF_BIGRUN_N"), "10000"))
	if err != nil {
		t.Fatal(err)
	}
	run := bigRun(n)
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d results, %d bytes", path, len(run.Results), len(b))
}
