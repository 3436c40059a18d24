package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestLegendRoundsWithoutBaseline: a run of several rounds with no
// baseline cell says so, not "one round".
func TestLegendRoundsWithoutBaseline(t *testing.T) {
	run := &result.Run{Rounds: 2, Summaries: []result.Summary{{Cell: result.CellKey{Network: "vxlan", Workload: "tcp_rr", Placement: "cross-host"}, Figure: result.KeyTransactions, N: 2, Median: 1000, CV: 0.1}}}
	var b bytes.Buffer
	legend(&b, run, false, "")
	if strings.Contains(b.String(), "one round") || !strings.Contains(b.String(), "medians over 2 rounds; no cell has a baseline") {
		t.Errorf("legend:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "the cells' spread") || !strings.Contains(b.String(), "vxlan tcp_rr cross-host") {
		t.Errorf("noise line does not name the cells it measured:\n%s", b.String())
	}
}

// TestNoiseNamesBackend: a run with the lab's baseline and a Kubernetes
// baseline names the backend in the noise line (issue 35 item 8: the
// stored kube-vs-replica run printed two "tcp_crr cross-host trans/s").
func TestNoiseNamesBackend(t *testing.T) {
	run, err := result.Read(filepath.Join("..", "..", "docs", "examples", "kube-vs-replica-iptables.json"))
	if err != nil {
		t.Fatal(err)
	}
	Refresh(run)
	var b bytes.Buffer
	noise(&b, run)
	line, _, _ := strings.Cut(b.String(), "\n")
	_, list, _ := strings.Cut(line, "): ")
	seen := map[string]bool{}
	for _, part := range strings.Split(list, ", ") {
		name, _, _ := strings.Cut(part, " (")
		name = name[:strings.LastIndex(name, " ")] // without the CV
		if seen[name] {
			t.Errorf("noise line names %q twice: %s", name, line)
		}
		seen[name] = true
	}
	if !strings.Contains(line, "kubernetes: tcp_crr cross-host") {
		t.Errorf("noise line does not name the kubernetes backend: %s", line)
	}
}

// TestTableFamily (issue 35 item 5): the default run's table states how
// many verdicts it printed and corrects their "differs" marks (Holm);
// its one uncorrected difference, vxlan's stream 0.37x [0.17, 0.80], is
// ? after it, and the HTML's "In short" no longer says "vxlan loses 63
// %" as settled; --uncorrected shows the mark alone.
func TestTableFamily(t *testing.T) {
	out := exampleTable(t, "default")
	for _, want := range []string{
		"family: 10 tested ratios printed; their \"differs\" marks are corrected by Holm's procedure",
		"0 differ after it, of 1 alone; differ alone but not after it, so ? here: vxlan cross-host tcp_stream Gbit/s",
		"0.08 (?0.37x [0.17, 0.80])",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	run, err := result.Read(filepath.Join("..", "..", "docs", "examples", "default.json"))
	if err != nil {
		t.Fatal(err)
	}
	answer := strings.Join(Answer([]Input{NewInput("default.json", run)}), " ")
	var b bytes.Buffer
	if err := HTML(&b, []Input{NewInput("default.json", run)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "vxlan loses") {
		t.Errorf("the HTML's In short repeats an uncorrected verdict: %s", answer)
	}
	if !strings.Contains(b.String(), "family: 10 tested ratios printed") {
		t.Errorf("the HTML does not state the family")
	}
	Uncorrected = true
	t.Cleanup(func() { Uncorrected = false })
	if out := exampleTable(t, "default"); !strings.Contains(out, "0.08 (0.37x [0.17, 0.80])") || !strings.Contains(out, "--uncorrected") {
		t.Errorf("--uncorrected does not show the mark alone:\n%s", out)
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
