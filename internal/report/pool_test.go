package report

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestPool: rounds are renumbered one file after the other, so cells pair
// within their own file's rounds only; results without rounds stay 0;
// every verdict is computed again over the pooled rounds.
func TestPool(t *testing.T) {
	mk := func(rounds int, ratio float64) *result.Run {
		run := &result.Run{Schema: result.Schema, Rounds: rounds, Warnings: []string{"kept: not Summarize's", stats.WarnNoisy + "old"}}
		for r := 1; r <= rounds; r++ {
			base := 10000 * float64(r) // a drift each file's own rounds share
			for _, n := range []string{"baseline", "host"} {
				x := rr(n, "cross-host", base)
				if n == "host" {
					x = rr(n, "cross-host", base*ratio*(1+0.001*float64(r%2)))
				}
				x.Round = r
				run.Results = append(run.Results, x)
			}
		}
		stats.Summarize(run, FiguresOf)
		return run
	}
	a, b := mk(3, 1.0), mk(2, 1.01)
	pooled, lines, err := Pool([]Input{{Name: "a", Run: a}, {Name: "b", Run: b}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines, "; "); got != "a: rounds 1-3 are pooled rounds 1-3; b: rounds 1-2 are pooled rounds 4-5" {
		t.Errorf("lines %q", got)
	}
	rounds := map[int]int{}
	for _, r := range pooled.Results {
		rounds[r.Round]++
	}
	if len(rounds) != 5 || rounds[4] != 2 || pooled.Rounds != 5 {
		t.Errorf("pooled rounds %v (Rounds %d), want 1-5 with both cells each", rounds, pooled.Rounds)
	}
	for _, s := range pooled.Summaries {
		if s.Cell.Network == "host" && s.Figure == result.KeyTransactions {
			if s.N != 5 || s.VsBaseline == nil || s.VsBaseline.N != 5 || s.VsBaseline.Verdict != stats.Equivalent {
				t.Errorf("host over the pooled rounds: %+v %+v, want 5 pairs, equivalent", s, s.VsBaseline)
			}
		}
	}
	var kept, stale int
	for _, w := range pooled.Warnings {
		if strings.HasSuffix(w, "kept: not Summarize's") {
			kept++
		}
		if strings.HasSuffix(w, "old") {
			stale++
		}
	}
	if kept != 2 || stale != 0 {
		t.Errorf("warnings %q: want each file's own kept (named), the noise warnings recomputed", pooled.Warnings)
	}
	if _, _, err := Pool([]Input{{Name: "a", Run: a}}); err == nil || !strings.Contains(err.Error(), "two results files or more") {
		t.Errorf("one file: %v", err)
	}
	// a file from before rounds: its results stay unpaired (round 0)
	old := &result.Run{Schema: result.Schema, Results: []result.Result{rr("baseline", "cross-host", 1), rr("host", "cross-host", 1)}}
	pooled, lines, _ = Pool([]Input{{Name: "a", Run: a}, {Name: "old", Run: old}})
	if pooled.Results[len(pooled.Results)-1].Round != 0 || !strings.Contains(strings.Join(lines, "; "), "old: no rounds") {
		t.Errorf("a file without rounds: %v, round %d", lines, pooled.Results[len(pooled.Results)-1].Round)
	}
}
