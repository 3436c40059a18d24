package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

// runFiles are the stored run files the report package's goldens use too.
const runFiles = "../../internal/report/testdata"

func updating() bool {
	f := flag.Lookup("update") // labtest's
	return f != nil && f.Value.String() == "true"
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
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
			out, err := stdout(t, func() error { return cmdReport([]string{filepath.Join(runFiles, name+".json")}) })
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "report_"+name, []byte(out))
		})
	}
	t.Run("ratio", func(t *testing.T) {
		var all strings.Builder
		for _, ab := range []string{"tcp_rr:sockperf_tcp", "tcp_stream:iperf3_tcp"} {
			out, err := stdout(t, func() error {
				return cmdReport([]string{filepath.Join(runFiles, "reference.json"), "--ratio", ab})
			})
			if err != nil {
				t.Fatal(err)
			}
			all.WriteString(out)
		}
		golden(t, "report_ratio", []byte(all.String()))
	})
	t.Run("hgrm", func(t *testing.T) {
		var all strings.Builder
		for _, name := range runNames(t) {
			dir := t.TempDir()
			out, err := stdout(t, func() error {
				return cmdReport([]string{filepath.Join(runFiles, name+".json"), "--hgrm", dir})
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
		golden(t, "report_hgrm", []byte(all.String()))
	})
}

// doneOf rebuilds the steps of a load run from its results, as cnperf load
// kept them.
func doneOf(run *result.Run) []workload.StepResult {
	var done []workload.StepResult
	for _, r := range run.Results {
		p := workload.Params{Extra: map[string]string{}}
		for k, v := range r.Params {
			switch k {
			case "duration_s":
				p.Duration = time.Duration(v.(float64) * float64(time.Second))
			case "message_size":
				p.MessageSize = int(v.(float64))
			default:
				if s, ok := v.(string); ok {
					p.Extra[k] = s
				}
			}
		}
		var err error
		if r.Error != "" {
			err = fmt.Errorf("%s", r.Error)
		}
		done = append(done, workload.StepResult{Params: p, Metrics: r.Metrics, Err: err})
	}
	return done
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
			done := doneOf(run)
			out, _ := stdout(t, func() error {
				for i, r := range run.Results {
					if r.Error != "" {
						continue
					}
					p := done[i].Params
					rep := workload.Report{}
					if c := r.Metrics.ClientCPUSPerS; c != nil {
						rep.CPUSeconds = *c * p.Duration.Seconds()
					}
					fmt.Printf("-- %s %s %s %s\n", r.Network, r.Placement, r.Workload, r.Step)
					printLoad(os.Stdout, r.Workload, p, r.Metrics, rep)
				}
				printMaxRates(done)
				return nil
			})
			golden(t, "load_"+strings.TrimPrefix(name, "load_"), []byte(out))
		})
	}
}
