package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
)

// TestWriteHgrmStaysInFolder: names from a results file (a histogram's
// key, a network) never take a .hgrm file out of the folder named (found
// by FuzzReport: a key "/../../x" wrote outside it).
func TestWriteHgrmStaysInFolder(t *testing.T) {
	h := hist.New()
	h.Record(20 * time.Microsecond)
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b")
	run := &result.Run{Results: []result.Result{{
		Network: "../../n", Workload: "tcp_rr", Histogram: enc,
		Metrics: result.Metrics{Histograms: map[string]string{"/../../escape": enc}},
	}}}
	files, err := WriteHgrm(dir, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files %v, want 2", files)
	}
	for _, f := range files {
		if filepath.Dir(f) != dir {
			t.Errorf("%s is outside %s", f, dir)
		}
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Errorf("files beside the folder: %v", ents)
	}
}
