package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/result"
)

// TestRecommendMeasures: `cnperf recommend --profile throughput` given no
// results file measures what the profile's rules read (tcp_stream here,
// nothing else) on the lab, writes the run, ranks the networks with the
// figures behind each place, and leaves nothing behind.
func TestRecommendMeasures(t *testing.T) {
	labtest.NeedRoot(t)
	if testing.Short() {
		t.Skip("-short: not building labs")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	b, err := exec.Command(cnperf(t), "recommend", "--profile", "throughput", "--networks", "host,vxlan",
		"--duration", "300ms", "--repeat", "2", "--out", out).CombinedOutput()
	text := string(b)
	if err != nil {
		t.Fatalf("recommend: %v\n%s", err, text)
	}
	for _, want := range []string{"no results file given, measuring what its rules read", "tcp_stream: throughput_bps",
		"profile throughput, cross-host:", "1. ", "tcp_stream Gbit/s", "of best (bulk transfer rate, weight 1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	run, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	nets := map[string]bool{}
	for _, r := range run.Results {
		if r.Workload != "tcp_stream" {
			t.Errorf("measured %s, which throughput does not read", r.Workload)
		}
		nets[r.Network] = true
	}
	if !nets["host"] || !nets["vxlan"] || !nets[result.BaselineNetwork] || run.Rounds != 2 {
		t.Errorf("run holds %v in %d rounds, want host, vxlan and baseline in 2", nets, run.Rounds)
	}
	ids := regexp.MustCompile(`\(lab ([0-9a-f]+)\)`).FindAllStringSubmatch(text, -1)
	if len(ids) == 0 {
		t.Fatalf("no lab named in the progress lines:\n%s", text)
	}
	for _, m := range ids {
		labtest.AssertClean(t, m[1])
	}
}
