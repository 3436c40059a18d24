package result

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goodRun is two rounds of one cell and its summary, as cnperf writes them.
func goodRun() *Run {
	res := func(round int, tps float64) Result {
		return Result{Network: "bridge", Placement: "same-host", Workload: "tcp_rr", Round: round,
			Metrics: Metrics{TransactionsPerS: F(tps), LatencyUs: map[string]float64{"p50": 40, "p99": 90}, LossRatio: F(0), Transactions: I(1000)}}
	}
	r := &Run{Schema: Schema, Results: []Result{res(1, 20000), res(2, 22000)}}
	r.Summaries = []Summary{{Cell: r.Results[0].Key(), Figure: KeyTransactions, N: 2, Median: 21000, CILow: 19000, CIHigh: 23000, CILevel: 0.95}}
	return r
}

// TestCheck: records no measurement can give are refused, the first one
// named (issue 23, finding 6: zero and negative rates were silently
// dropped or ranked first, duplicated rounds counted as samples).
func TestCheck(t *testing.T) {
	if err := goodRun().Check(); err != nil {
		t.Fatalf("a good run: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(r *Run)
		want   string
	}{
		{"zero rate", func(r *Run) { r.Results[1].Metrics.TransactionsPerS = F(0) }, "results[1] (bridge same-host tcp_rr round 2): transactions_per_s is 0"},
		{"negative throughput", func(r *Run) { r.Results[0].Metrics.ThroughputBps = F(-5) }, "results[0] (bridge same-host tcp_rr round 1): throughput_bps is -5"},
		{"negative latency", func(r *Run) { r.Results[0].Metrics.LatencyUs["p99"] = -1 }, "latency_us.p99 is -1"},
		{"NaN", func(r *Run) { r.Results[1].Metrics.LatencyUs["p50"] = math.NaN() }, "latency_us.p50 is NaN"},
		// issue 35 item 8: a zero p99 was accepted, and recommend rated it "1.00 of best"
		{"zero percentile", func(r *Run) { r.Results[0].Metrics.LatencyUs["p99"] = 0 }, "latency_us.p99 is 0; a measured latency percentile is positive"},
		{"Inf", func(r *Run) { r.Results[1].Metrics.TransactionsPerS = F(math.Inf(1)) }, "transactions_per_s is +Inf"},
		{"loss above 1", func(r *Run) { r.Results[0].Metrics.LossRatio = F(1.5) }, "loss_ratio is 1.5"},
		{"negative count", func(r *Run) { r.Results[0].Metrics.Transactions = I(-3) }, "transactions is -3"},
		{"duplicated round", func(r *Run) { r.Results = append(r.Results, r.Results[0]) }, "results[2] (bridge same-host tcp_rr round 1): the same cell and round as results[0]"},
		{"summary n", func(r *Run) { r.Summaries[0].N = 3 }, "summaries[0] (bridge same-host tcp_rr transactions_per_s): n is 3 but the results hold 2"},
		{"summary median", func(r *Run) { r.Summaries[0].Median = 50000 }, "median 50000 lies outside"},
		{"summary interval", func(r *Run) { r.Summaries[0].CILow = 21500 }, "does not hold the median"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := goodRun()
			tc.change(r)
			err := r.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	// a failed result carries no figures to check
	r := goodRun()
	r.Results[1].Error, r.Results[1].Metrics = "server on s1: stopped", Metrics{TransactionsPerS: F(0)}
	r.Summaries[0].N, r.Summaries[0].Median, r.Summaries[0].CILevel = 1, 20000, 0
	if err := r.Check(); err != nil {
		t.Errorf("a failed result: %v", err)
	}
}

// TestReadRefuses: Read names the file and the record, and refuses a file
// above the size cap before reading it.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := goodRun()
	bad.Results[1].Metrics.TransactionsPerS = F(-1)
	p := filepath.Join(dir, "zero.json")
	if err := bad.Write(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "zero.json: results[1]") || !strings.Contains(err.Error(), "remove that record") {
		t.Errorf("err %v, want the file and record named with the fix", err)
	}
	// out of float64's range: the decoder's error, with its line
	inf := filepath.Join(dir, "inf.json")
	good := goodRun()
	if err := good.Write(inf); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(inf)
	b = []byte(strings.Replace(string(b), "22000", "1e999", 1))
	if err := os.WriteFile(inf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(inf); err == nil || !strings.Contains(err.Error(), "1e999") || !strings.Contains(err.Error(), "at line") {
		t.Errorf("err %v, want the value and its line", err)
	}
	old := MaxFileBytes
	MaxFileBytes = 100
	defer func() { MaxFileBytes = old }()
	_, err := Read(inf)
	if err == nil || !strings.Contains(err.Error(), "above the 0 MB") && !strings.Contains(err.Error(), "a results file may hold") {
		t.Errorf("err %v, want the size cap", err)
	}
	if errors.Is(err, os.ErrNotExist) {
		t.Error("the cap is not a missing file")
	}
}

// TestReadSniffs (issue 34 item 5): a large file that is not JSON is
// refused from its first bytes, with the file named, before it is read
// whole.
func TestReadSniffs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// 64 MB of zeros: read whole, the refusal would cost that much memory
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Read(p)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "big.bin: not a cnperf results file (it does not start with a JSON object") {
		t.Fatalf("err %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing a 64 MB non-JSON file allocated %d bytes", grew)
	}
}
