package report

import (
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// TestSeedPairsPerBackend (issue 35 item 7): in a run of the lab and a
// Kubernetes cluster, a study's pairs are made within one backend. On
// ca57813 study 002 counted 2 pairs, "2 of 2 shown" in the vxlan run,
// for one pair of rows counted twice (the lab's vxlan against the lab's
// baseline and against the cluster's); now one per backend pair of cells.
func TestSeedPairsPerBackend(t *testing.T) {
	for _, f := range []string{"flannel-vxlan-real-vs-replica", "flannel-host-gw-real-vs-replica"} {
		run, err := result.Read(filepath.Join("..", "..", "docs", "examples", f+".json"))
		if err != nil {
			t.Fatal(err)
		}
		Refresh(run)
		found := false
		for _, sr := range CompareSeeds(run) {
			if sr.Table.ID != "002-overhead" {
				continue
			}
			found = true
			if cr := sr.Columns[0]; cr.Pairs != 1 {
				t.Errorf("%s: study 002 has %d pairs (%v %v %v %v), want 1: the lab's pair of rows, once", f, cr.Pairs, cr.Shown, cr.SameNotShown, cr.OppositeNotShown, cr.Against)
			}
		}
		if !found {
			t.Errorf("%s: no study 002", f)
		}
	}
}
