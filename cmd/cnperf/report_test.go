package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/standalone"

	"github.com/cnperf/cnperf/internal/result"
)

// runFiles are the stored run files the report package's goldens use too.
const runFiles = "../../internal/report/testdata"

// checkGolden compares got with testdata/NAME.golden; go test -update
// rewrites it (the one -update flag, package golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, string(got))
}

// stdout runs f with os.Stdout captured.
func stdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	ferr := f()
	os.Stdout = old
	w.Close()
	out := <-done
	r.Close()
	return string(out), ferr
}

func runNames(t *testing.T) []string {
	paths, err := filepath.Glob(filepath.Join(runFiles, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no run files in %s: %v", runFiles, err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	return names
}

// TestGoldenReport locks what `cnperf report FILE` prints for every stored
// run file, and its --ratio and --hgrm renderings.
func TestGoldenReport(t *testing.T) {
	for _, name := range runNames(t) {
		t.Run(name, func(t *testing.T) {
			out, err := stdout(t, func() error { return call("report", []string{filepath.Join(runFiles, name+".json")}) })
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "report_"+name, []byte(out))
		})
	}
	t.Run("ratio", func(t *testing.T) {
		var all strings.Builder
		for _, ab := range []string{"tcp_rr:sockperf_tcp", "tcp_stream:iperf3_tcp"} {
			out, err := stdout(t, func() error {
				return call("report", []string{filepath.Join(runFiles, "reference.json"), "--ratio", ab})
			})
			if err != nil {
				t.Fatal(err)
			}
			all.WriteString(out)
		}
		checkGolden(t, "report_ratio", []byte(all.String()))
	})
	t.Run("hgrm", func(t *testing.T) {
		var all strings.Builder
		for _, name := range runNames(t) {
			dir := t.TempDir()
			out, err := stdout(t, func() error {
				return call("report", []string{filepath.Join(runFiles, name+".json"), "--hgrm", dir})
			})
			if err != nil {
				t.Fatal(err)
			}
			// the table is locked above: keep the last line, the folder named DIR
			lines := strings.Split(strings.TrimSpace(out), "\n")
			fmt.Fprintf(&all, "== %s: %s\n", name, strings.ReplaceAll(lines[len(lines)-1], dir, "DIR"))
			files, _ := os.ReadDir(dir)
			sort.Slice(files, func(i, j int) bool { return files[i].Name() < files[j].Name() })
			for i, f := range files {
				b, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&all, "%s %x\n", f.Name(), sha256.Sum256(b))
				if i == 0 && name == "load_standalone" {
					all.Write(b)
				}
			}
		}
		checkGolden(t, "report_hgrm", []byte(all.String()))
	})
}

// TestGoldenLoadOutput locks what `cnperf load` prints per step and its
// max-rate summary, on the stored load runs.
func TestGoldenLoadOutput(t *testing.T) {
	for _, name := range runNames(t) {
		if !strings.HasPrefix(name, "load") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			run, err := result.Read(filepath.Join(runFiles, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := stdout(t, func() error {
				for _, r := range run.Results {
					if r.Error != "" {
						continue
					}
					cpu := 0.0
					if c := r.Metrics.ClientCPUSPerS; c != nil {
						cpu = *c * r.Params[result.ParamDuration].(float64)
					}
					fmt.Printf("-- %s %s %s %s\n", r.Network, r.Placement, r.Workload, r.Step)
					standalone.LoadStep(os.Stdout, r, cpu)
				}
				standalone.MaxRates(os.Stdout, run.Results)
				return nil
			})
			checkGolden(t, "load_"+strings.TrimPrefix(name, "load_"), []byte(out))
		})
	}
}

func TestReportHelpAndArgs(t *testing.T) {
	out, err := stdout(t, func() error { return call("report", []string{"-h"}) })
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out, "usage: cnperf report FILE... [flags]") || !strings.Contains(out, "--ratio A:B") {
		t.Errorf("report -h: err %v, output %q; want the usage", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name a results file"},
		{[]string{"--ratio", "a:b"}, "name a results file"},
		{[]string{filepath.Join(runFiles, "startup.json"), "--ratio", "a:b", "extra"}, "extra: no such file"}, // flags between files
		{[]string{filepath.Join(runFiles, "startup.json"), "missing.json"}, "missing.json: no such file; name a results file"},
		{[]string{filepath.Join(runFiles, "startup.json"), "--html", "/no/such/dir/r.html"}, "--html /no/such/dir/r.html: folder /no/such/dir does not exist"},
		{[]string{filepath.Join(runFiles, "reference.json"), "--ratio", "tcp_rr"}, "want two workloads"},
	} {
		_, err := stdout(t, func() error { return call("report", c.args) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("report %v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestWorkloadsVerbose(t *testing.T) {
	out, err := stdout(t, func() error { return call("workloads", []string{"-v"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"transactions_per_s", "with its ratio to baseline", "--rate=list", "--keepalive=bool", "options: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("workloads -v lacks %q", want)
		}
	}
}

// TestRecommendArgs: bad input to `cnperf recommend` is one line naming
// the fix; a good one ranks.
func TestRecommendArgs(t *testing.T) {
	file := filepath.Join(runFiles, "summaries.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{file}, "--profile is required: one of latency, throughput"},
		{[]string{file, "--profile", "fastest"}, `unknown profile "fastest"; use one of latency`},
		{[]string{file, "--profile", "latency", "--constraint", "cheap"}, `unknown constraint "cheap"; use no-l2-adjacency`},
		{[]string{file, "--profile", "latency", "--constraint", "cloud-route-limit"}, "want cloud-route-limit=N"},
		{[]string{"missing.json", "--profile", "latency"}, "missing.json: no such file"},
		// without a file it measures, but refuses a plan above --max-time
		// before anything is built
		{[]string{"--profile", "latency", "--max-time", "1s"}, "above --max-time 1s"},
		{[]string{file, "--profile", "latency", "--networks", "host"}, "--networks is for measuring"},
	} {
		_, err := stdout(t, func() error { return call("recommend", c.args) })
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("recommend %v: %v, want one line with %q", c.args, err, c.want)
		}
	}
	out, err := stdout(t, func() error { return call("recommend", []string{file, "--profile", "latency"}) })
	if err != nil || !strings.Contains(out, "1. host") {
		t.Errorf("recommend: %v\n%s", err, out)
	}
	// without a file: what it would measure for the profile, the
	// constraints' removals said, and the estimate
	out, err = stdout(t, func() error {
		return call("recommend", []string{"--profile", "mixed", "--constraint", "no-l2-adjacency", "--dry-run"})
	})
	for _, want := range []string{"tcp_rr: latency_us.p99 of long-connection cells", "tcp_stream: throughput_bps", "tcp_crr: transactions_per_s of short-connection cells",
		"removed by the constraints, not measured: host-gw: needs the hosts on one L2 segment", "3 rounds of 2s cells, estimated"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("recommend --dry-run: %v, want %q in\n%s", err, want, out)
		}
	}
	if strings.Contains(out, "host-gw cross-host") {
		t.Errorf("recommend --dry-run measures host-gw, which the constraint removes:\n%s", out)
	}
	out, err = stdout(t, func() error { return call("recommend", []string{"--rules"}) })
	if err != nil || !strings.Contains(out, "latency_us.p99") || !strings.Contains(out, "no-l2-adjacency") {
		t.Errorf("recommend --rules: %v\n%s", err, out)
	}
}

// TestReportHTMLAndCSV: `cnperf report` of two files writes one page and
// the CSV files.
func TestReportHTMLAndCSV(t *testing.T) {
	dir := t.TempDir()
	page, csvDir := filepath.Join(dir, "r.html"), filepath.Join(dir, "csv")
	_, err := stdout(t, func() error {
		return call("report", []string{filepath.Join(runFiles, "summaries.json"), filepath.Join(runFiles, "startup.json"), "--html", page, "--csv", csvDir})
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "Start-up phases") || !strings.Contains(string(b), "Comparison with the baseline") {
		t.Errorf("page: %v", err)
	}
	for _, f := range []string{"results.csv", "params.csv", "summaries.csv", "skipped.csv", "environment.csv"} {
		if _, err := os.Stat(filepath.Join(csvDir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestReportExports: `cnperf report --openmetrics --ndjson` writes both
// files; a bad output path exits 2 with one line and prints no table
// (it is found before the work, not after).
func TestReportExports(t *testing.T) {
	dir := t.TempDir()
	om, nd := filepath.Join(dir, "m.prom"), filepath.Join(dir, "d.ndjson")
	out, err := stdout(t, func() error {
		return call("report", []string{filepath.Join(runFiles, "summaries.json"), "--openmetrics", om, "--ndjson", nd})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{om, nd} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 || !strings.Contains(out, f) {
			t.Errorf("%s: %v, not named in the output", f, err)
		}
	}
	bin := cnperf(t)
	for _, args := range [][]string{
		{"--csv", "/etc/hostname"},
		{"--openmetrics", filepath.Join(dir, "no", "m.prom")},
		{"--ndjson", dir},
		{"--html", filepath.Join(dir, "no", "r.html")},
		{"--hgrm", "/etc/hostname"},
	} {
		cmd := exec.Command(bin, append([]string{"report", filepath.Join(runFiles, "summaries.json")}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
		if o.Len() > 0 || strings.Count(strings.TrimSpace(e.String()), "\n") > 0 || !strings.Contains(e.String(), args[0]) {
			t.Errorf("%v: stdout %q, stderr %q: want nothing on stdout and one line naming %s", args, o.String(), e.String(), args[0])
		}
	}
}

// TestReportIncomplete: `cnperf report` on the file a killed run left
// says first, in one line, that the run is incomplete and how much of it
// there is.
func TestReportIncomplete(t *testing.T) {
	out, err := stdout(t, func() error { return call("report", []string{filepath.Join(runFiles, "incomplete.json")}) })
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "incomplete run: 5 of 12 cells finished") {
		t.Errorf("first line %q, want it to say the run is incomplete, 5 of 12 cells", first)
	}
	if n := strings.Count(out, "incomplete"); n != 1 {
		t.Errorf("%d mentions of incomplete, want one line:\n%s", n, out)
	}
}
