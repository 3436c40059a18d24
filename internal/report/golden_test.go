package report

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
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

// TestGoldenServices locks the ClusterIP comparison alone: the text of
// the services experiment's section, as registered.
func TestGoldenServices(t *testing.T) {
	var text func(io.Writer, *result.Run)
	for _, i := range kit.Texts() {
		if i.Name == "services" {
			text = i.Text
		}
	}
	if text == nil {
		t.Fatal("no services section registered")
	}
	for name, run := range runFiles(t) {
		if !strings.HasPrefix(name, "services") {
			continue
		}
		var b bytes.Buffer
		text(&b, run)
		checkGolden(t, name+".services", b.Bytes())
	}
}
