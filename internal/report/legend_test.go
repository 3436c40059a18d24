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
	legend(&b, run)
	if strings.Contains(b.String(), "one round") || !strings.Contains(b.String(), "medians over 2 rounds; no cell has a baseline") {
		t.Errorf("legend:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "the cells' spread") || !strings.Contains(b.String(), "vxlan tcp_rr cross-host") {
		t.Errorf("noise line does not name the cells it measured:\n%s", b.String())
	}
}
