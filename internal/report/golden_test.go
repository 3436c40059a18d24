package report

import (
	"bytes"
	"github.com/cnperf/cnperf/internal/golden"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

// checkGolden compares got with testdata/NAME.golden; go test -update
// rewrites it (the one -update flag, package golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, string(got))
}

// runFiles are the stored run files: real `cnperf run` outputs, one per
// workload family (see testdata/README).
func runFiles(t *testing.T) map[string]*result.Run {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no run files under testdata: %v", err)
	}
	runs := map[string]*result.Run{}
	for _, p := range paths {
		r, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		Refresh(r) // as `cnperf report` reads it
		runs[strings.TrimSuffix(filepath.Base(p), ".json")] = r
	}
	return runs
}

// TestGoldenTable locks the table of every stored run file.
func TestGoldenTable(t *testing.T) {
	for name, run := range runFiles(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			Table(&b, run)
			checkGolden(t, name+".table", b.Bytes())
		})
	}
}

// TestGoldenRatios locks `cnperf report --ratio` on the reference run.
func TestGoldenRatios(t *testing.T) {
	run := runFiles(t)["reference"]
	var b bytes.Buffer
	for _, ab := range [][2]string{{"tcp_rr", "sockperf_tcp"}, {"tcp_stream", "iperf3_tcp"}} {
		if err := Ratios(&b, run, ab[0], ab[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := Ratios(&b, run, "tcp_rr", "udp_stream"); err == nil {
		t.Error("a ratio of workloads the run does not have")
	}
	checkGolden(t, "reference.ratio", b.Bytes())
}

// TestGoldenServices locks the ClusterIP comparison alone.
func TestGoldenServices(t *testing.T) {
	for name, run := range runFiles(t) {
		if !strings.HasPrefix(name, "services") {
			continue
		}
		var b bytes.Buffer
		Services(&b, run)
		checkGolden(t, name+".services", b.Bytes())
	}
}
