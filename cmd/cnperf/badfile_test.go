package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestImpossibleFilesRefused: report, compare (as a gate) and recommend
// refuse a results file whose records no measurement gives, naming the
// file and the first such record (issue 23, finding 6: compare exited 0
// with the rows dropped, recommend ranked p99 -1 first, duplicated rounds
// counted as samples).
func TestImpossibleFilesRefused(t *testing.T) {
	good := "../../docs/examples/host-tcp_rr-1.json"
	if _, err := result.Read(good); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := map[string]func(r *result.Run){
		"zero.json":     func(r *result.Run) { r.Results[0].Metrics.TransactionsPerS = result.F(0) },
		"negative.json": func(r *result.Run) { r.Results[1].Metrics.LatencyUs["p99"] = -1 },
		"dup.json":      func(r *result.Run) { r.Results = append(r.Results, r.Results[0]) },
	}
	want := map[string]string{
		"zero.json":     "results[0] (baseline cross-host tcp_rr round 1): transactions_per_s is 0",
		"negative.json": "results[1] (host cross-host tcp_rr round 1): latency_us.p99 is -1",
		"dup.json":      "results[6] (baseline cross-host tcp_rr round 1): the same cell and round as results[0]",
	}
	for name, change := range bad {
		r, _ := result.Read(good)
		change(r)
		if err := r.Write(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, w := range want {
		p := filepath.Join(dir, name)
		for _, c := range []struct {
			cmd string
			run func() error
		}{
			{"report", func() error { return call("report", []string{p}) }},
			{"compare", func() error { return compareArgs([]string{good, p, "--fail-on-regression", "10"}, io.Discard) }},
			{"recommend", func() error { return call("recommend", []string{p, "--profile", "latency"}) }},
		} {
			t.Run(c.cmd+"/"+name, func(t *testing.T) {
				var err error
				_, _ = stdout(t, func() error { err = c.run(); return nil })
				if err == nil || !strings.Contains(err.Error(), w) || !strings.Contains(err.Error(), name) {
					t.Fatalf("err %v, want %q naming %s", err, w, name)
				}
			})
		}
	}
}
