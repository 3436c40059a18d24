package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestLegendRoundsWithoutBaseline: a run of several rounds with no
// baseline cell says so, not "one round".
func TestLegendRoundsWithoutBaseline(t *testing.T) {
	run := &result.Run{Rounds: 2, Summaries: []result.Summary{{Cell: result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host"}, Figure: result.KeyTransactions, N: 2, Median: 1000, CV: 0.1}}}
	var b bytes.Buffer
	legend(&b, run, false)
	if strings.Contains(b.String(), "one round") || !strings.Contains(b.String(), "medians over 2 rounds; no cell has a baseline") {
		t.Errorf("legend:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "the cells' spread") || !strings.Contains(b.String(), "vxlan tcp_rr cross-host") {
		t.Errorf("noise line does not name the cells it measured:\n%s", b.String())
	}
}

// Issue 34 finding 8: a run cut short, whose summarised cells have no
// paired ratio while the others show "(?0.62x)" (a ratio of means), said
// "no (x) ratio" right below them. The legend now says what (?x) is.
func TestLegendOfMeanRatios(t *testing.T) {
	run, err := result.Read("../../docs/examples/default.json")
	if err != nil {
		t.Fatal(err)
	}
	// cut short: only the baselines summarised, with nothing to pair
	var kept []result.Summary
	for _, s := range run.Summaries {
		if s.Cell.Network == result.BaselineNetwork {
			s.VsBaseline = nil
			kept = append(kept, s)
		}
	}
	run.Summaries = kept
	var b strings.Builder
	Table(&b, run)
	out := b.String()
	if !strings.Contains(out, "(?") {
		t.Fatalf("no (?x) ratio of means in the table:\n%s", out)
	}
	if strings.Contains(out, "so no (x) ratio") {
		t.Errorf("the legend says there is no ratio below a table that shows some:\n%s", out)
	}
	if !strings.Contains(out, "(?x) after a figure without an interval: the ratio of the cell's mean to the baseline's") {
		t.Errorf("the legend does not say what (?x) is:\n%s", out)
	}
}
