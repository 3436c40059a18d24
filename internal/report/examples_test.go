package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// TestExampleStudyVerdicts renders the studies' comparison of the stored
// example runs (docs/examples) and checks the verdicts docs/report.md
// states for them, in these words, and that neither it nor the README says
// "reproduces" where the data does not show it.
func TestExampleStudyVerdicts(t *testing.T) {
	for _, c := range []struct {
		file, table string
		column      int
		verdict     string
		shown       string // "shown of pairs"
		said        string // the words the docs use
	}{
		{"default", "001-tcp-256", 0, VerdictNotShown, "0 of 5", "seed 001's TCP order at 256 B: same order, not shown (0 of 5 pairs shown after the correction for the 5; each alone, host above vxlan and vxlan below the baseline would be)"},
		{"default", "002-overhead", 0, VerdictNotShown, "0 of 6", "seed 002's overheads: same order, not shown (0 of 6 pairs shown after the correction for the 6; each alone, vxlan, host-gw and NAT above the VM would be)"},
		{"default", "001-bulk-1vm", 0, VerdictNotShown, "0 of 1", "seed 001's single-host bulk upload:\nsame order, not shown (bridge 0.64x [0.09, 4.72] of the baseline, the study's 0.82x and 1 both\ninside)"},
		{"clusterip", "003-long", 0, VerdictNotShown, "0 of 1", "seed 003's long-connection order: same order, not shown (iptables\n0.82x [0.60, 1.13] of eBPF)"},
		{"clusterip", "003-short", 0, VerdictOpposite, "0 of 1", "its short-connection order: opposite, within noise (iptables 2.25x\n[0.05, 95.7] of eBPF)"},
	} {
		run, err := result.Read(filepath.Join("..", "..", "docs", "examples", c.file+".json"))
		if err != nil {
			t.Fatal(err)
		}
		Refresh(run)
		var cr *SeedColumnResult
		for _, sr := range CompareSeeds(run) {
			if sr.Table.ID == c.table {
				cr = &sr.Columns[c.column]
			}
		}
		if cr == nil {
			t.Errorf("%s: no table %s", c.file, c.table)
			continue
		}
		t.Logf("%s %s: %s", c.file, c.table, orderingNote(*cr))
		if got := fmt.Sprintf("%d of %d", len(cr.Shown), cr.Pairs); cr.Verdict != c.verdict || got != c.shown {
			t.Errorf("%s %s: %s (%s shown), want %s (%s)", c.file, c.table, cr.Verdict, got, c.verdict, c.shown)
		}
		for i, doc := range []string{"docs/report.md", "README.md"} {
			b, err := os.ReadFile(filepath.Join("..", "..", doc))
			if err != nil {
				t.Fatal(err)
			}
			// the docs wrap lines where they like: compare the words
			text := strings.Join(strings.Fields(string(b)), " ")
			if i == 0 && !strings.Contains(text, strings.Join(strings.Fields(c.said), " ")) {
				t.Errorf("%s does not say %q of %s", doc, strings.Join(strings.Fields(c.said), " "), c.file)
			}
			for _, wrong := range []string{"default run reproduces", "clusterip run reproduces", "reproduces seed"} {
				if strings.Contains(text, wrong) {
					t.Errorf("%s says %q: no example run shows a study's order in full", doc, wrong)
				}
			}
		}
	}
}

// TestFlannelRealVsReplica recomputes the stored real-Flannel runs
// (docs/validation.md, "Real Flannel"): the cluster's pod network is paired
// with the lab's replica of its CNI (stats.PodReplica), and for tcp_rr
// both Flannel backends' rate differs from the replica's, below it, by
// about as much as the cluster's own baseline differs from the lab's.
func TestFlannelRealVsReplica(t *testing.T) {
	for _, tc := range []struct{ file, replica string }{{"vxlan", "vxlan"}, {"host-gw", "host-gw"}} {
		run, err := result.Read("../../docs/examples/flannel-" + tc.file + "-real-vs-replica.json")
		if err != nil {
			t.Fatal(err)
		}
		if got := stats.PodReplica(run.Environment); got != tc.replica {
			t.Fatalf("%s: replica %q, want %q", tc.file, got, tc.replica)
		}
		stats.Summarize(run, FiguresOf)
		vs := map[string]*result.Comparison{}
		for _, s := range run.Summaries {
			if s.Cell.Backend == "kubernetes" && s.Cell.Workload == "tcp_rr" && s.Figure == "transactions_per_s" && s.VsReplica != nil {
				vs[s.Cell.Network] = s.VsReplica
			}
		}
		pod, base := vs["pod"], vs["baseline"]
		if pod == nil || base == nil {
			t.Fatalf("%s: no real/replica ratio for the pod network (%v) or the baseline (%v)", tc.file, pod, base)
		}
		if pod.Against.Network != tc.replica {
			t.Errorf("%s: pod paired with %q", tc.file, pod.Against.Network)
		}
		for name, c := range map[string]*result.Comparison{"pod": pod, "baseline": base} {
			if c.Verdict != "differs" || c.CIHigh >= 1 {
				t.Errorf("%s %s: %.2fx [%.2f, %.2f] %s, want below 1 and differs", tc.file, name, c.Ratio, c.CILow, c.CIHigh, c.Verdict)
			}
		}
		// the pod network's gap is the baseline's: each interval holds the other's estimate
		if pod.Ratio < base.CILow || pod.Ratio > base.CIHigh {
			t.Errorf("%s: pod %.2fx outside the baseline's [%.2f, %.2f]", tc.file, pod.Ratio, base.CILow, base.CIHigh)
		}
	}
}
