package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Golden compares got with testdata/NAME.golden; go test -update rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
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
			golden(t, name+".table", b.Bytes())
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
	golden(t, "reference.ratio", b.Bytes())
}

// TestGoldenServices locks the ClusterIP comparison alone.
func TestGoldenServices(t *testing.T) {
	for name, run := range runFiles(t) {
		if !strings.HasPrefix(name, "services") {
			continue
		}
		var b bytes.Buffer
		Services(&b, run)
		golden(t, name+".services", b.Bytes())
	}
}
