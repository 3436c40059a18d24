package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
)

// exportRuns are every stored run file: the golden tests' and the
// documentation's examples.
func exportRuns(t *testing.T) map[string]Input {
	t.Helper()
	ins := map[string]Input{}
	for name, run := range runFiles(t) {
		ins[name] = Input{Name: name, Run: run}
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"schema": "cnperf/run/v1"`)) {
			continue // another kind of document (bench lab)
		}
		run, err := result.Parse(p, b)
		if err != nil {
			t.Fatal(err)
		}
		in := NewInput(p, run)
		ins["examples/"+in.Name] = in
	}
	if len(ins) < 20 {
		t.Fatalf("%d run files: the stored runs are missing", len(ins))
	}
	return ins
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{2.0499999999999545, "2.05"},
		{9412345678.9, "9412350000"},
		{1.5e-07, "0.00000015"},
		{0.30012412, "0.300124"},
		{42, "42"},
		{-3.14159265, "-3.14159"},
		{0, "0"},
		{math.NaN(), ""},
		{math.Inf(1), ""},
	} {
		if got := Decimal(c.v); got != c.want {
			t.Errorf("Decimal(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestOpenMetricsParses: the export of every stored run parses with the
// Prometheus text parser and the OpenMetrics 1.0 parser, holds one sample
// per summary (cell and figure) with the cell's labels, and a ratio with
// its verdict wherever the run compared a cell with its baseline.
func TestOpenMetricsParses(t *testing.T) {
	for name, in := range exportRuns(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := OpenMetrics(&b, []Input{in}); err != nil {
				t.Fatal(err)
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("text parser: %v\n%s", err, b.String())
			}
			// the OpenMetrics parser checks against the grammar, slowly
			// (25 s for the largest file on a busy machine): two files
			if name == "examples/default" || name == "startup" {
				omParse(t, b.Bytes(), len(fams))
			}
			sums := kit.Summaries(in.Run)
			samples, ratios, verdicts := 0, 0, 0
			for _, s := range sums {
				if s.VsBaseline != nil {
					ratios++
				}
			}
			runID := RunID(in.Run)
			for fname, mf := range fams {
				for _, m := range mf.GetMetric() {
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if labels["run_id"] != runID {
						t.Errorf("%s: run_id %q, want %q", fname, labels["run_id"], runID)
					}
					switch {
					case fname == "cnperf_run_info" || fname == "cnperf_run_start_time_seconds":
					case fname == "cnperf_vs_baseline_ratio":
						if labels["verdict"] == "" || labels["figure"] == "" {
							t.Errorf("%s without its verdict or figure: %v", fname, labels)
						}
						verdicts++
					case strings.HasPrefix(fname, "cnperf_vs_"):
					case strings.HasSuffix(fname, "_ci_low") || strings.HasSuffix(fname, "_ci_high"):
					default:
						for _, l := range []string{"network", "workload", "placement", "lb", "backend"} {
							if _, ok := labels[l]; !ok && l != "lb" {
								t.Errorf("%s lacks the label %s: %v", fname, l, labels)
							}
						}
						samples++
					}
				}
			}
			if samples != len(uniqueSummaries(sums)) {
				t.Errorf("%d figure samples, want one per cell and figure: %d", samples, len(uniqueSummaries(sums)))
			}
			if verdicts != ratios {
				t.Errorf("%d ratios with a verdict, the run has %d", verdicts, ratios)
			}
		})
	}
}

// omParse reads an exposition with the OpenMetrics 1.0 parser, which
// wants the families the text parser read.
func omParse(t *testing.T, b []byte, families int) {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	omFams := 0
	for {
		mf := new(dto.MetricFamily)
		if err := dec.Decode(mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("OpenMetrics parser: %v", err)
		}
		omFams++
	}
	if omFams != families {
		t.Errorf("OpenMetrics parser read %d families, the text parser %d", omFams, families)
	}
}

// uniqueSummaries counts cells and figures (a file may hold one twice).
func uniqueSummaries(ss []result.Summary) map[sumKey]bool {
	m := map[sumKey]bool{}
	for _, s := range ss {
		m[sumKey{s.Cell, s.Figure}] = true
	}
	return m
}

// TestOpenMetricsEscapes: a label value with quotes, a backslash and a
// newline stays one value.
func TestOpenMetricsEscapes(t *testing.T) {
	run := &result.Run{Schema: result.Schema, Summaries: []result.Summary{{
		Cell: result.CellKey{Network: `we"ird\net` + "\nx", Workload: "tcp_rr", Placement: "same-host"}, Figure: "transactions_per_s", N: 1, Median: 1,
	}}}
	var b bytes.Buffer
	if err := OpenMetrics(&b, []Input{{Name: "x", Run: run}}); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatal(err)
	}
	m := fams["cnperf_transactions_per_s"].GetMetric()[0]
	for _, l := range m.GetLabel() {
		if l.GetName() == "network" && l.GetValue() != `we"ird\net`+"\nx" {
			t.Errorf("network = %q", l.GetValue())
		}
	}
}

// TestNDJSON: every line is one JSON object; actions and documents
// alternate, each action's _id the next document's doc_id, unique; every
// document carries the run id, the environment and its cell, one per
// summary.
func TestNDJSON(t *testing.T) {
	for name, in := range exportRuns(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := NDJSON(&b, []Input{in}); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
				t.Error("the file does not end in a newline (_bulk needs it)")
			}
			sc := bufio.NewScanner(&b)
			sc.Buffer(nil, 1<<20)
			ids := map[string]bool{}
			var pending string
			docs := 0
			for i := 0; sc.Scan(); i++ {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if i%2 == 0 {
					idx, _ := m["index"].(map[string]any)
					id, _ := idx["_id"].(string)
					if len(m) != 1 || id == "" {
						t.Fatalf("line %d is not an index action: %s", i+1, sc.Text())
					}
					if ids[id] {
						t.Errorf("line %d: _id %q twice", i+1, id)
					}
					ids[id], pending = true, id
					continue
				}
				docs++
				if m["doc_id"] != pending {
					t.Errorf("line %d: doc_id %v, its action's _id %q", i+1, m["doc_id"], pending)
				}
				if m["run_id"] != RunID(in.Run) || m["network"] == "" || m["figure"] == "" || m["schema"] != ExportSchema {
					t.Errorf("line %d lacks its run id, cell or figure: %s", i+1, sc.Text())
				}
				env, _ := m["environment"].(map[string]any)
				if env["kernel"] != in.Run.Environment.Kernel {
					t.Errorf("line %d: environment.kernel %v", i+1, env["kernel"])
				}
				if _, ok := m["value"].(float64); !ok {
					t.Errorf("line %d: no value", i+1)
				}
			}
			if want := len(uniqueSummaries(kit.Summaries(in.Run))); docs != want {
				t.Errorf("%d documents, want one per cell and figure: %d", docs, want)
			}
		})
	}
}

// TestCSVColumnsFixed: whatever a run holds, each file has its fixed
// header, every row as many cells as it, and every number is rounded.
func TestCSVColumnsFixed(t *testing.T) {
	ins := exportRuns(t)
	for name, in := range ins {
		tables := CSVTables([]Input{in})
		var names []string
		for n := range tables {
			names = append(names, n)
		}
		slices.Sort(names)
		want := []string{"environment.csv", "params.csv", "results.csv", "skipped.csv", "summaries.csv"}
		if !slices.Equal(names, want) {
			t.Fatalf("%s: files %v, want %v", name, names, want)
		}
		for file, rows := range tables {
			if !slices.Equal(rows[0], CSVColumns[file]) {
				t.Errorf("%s %s: header %v, want %v", name, file, rows[0], CSVColumns[file])
			}
			for i, r := range rows[1:] {
				if len(r) != len(rows[0]) {
					t.Fatalf("%s %s row %d: %d cells, header %d", name, file, i+2, len(r), len(rows[0]))
				}
				for j, c := range r {
					v, err := strconv.ParseFloat(c, 64)
					// a run id is a name, whatever its characters ("035620")
					if err != nil || file == "environment.csv" || rows[0][j] == "value" && file == "params.csv" || rows[0][j] == "run_id" {
						continue
					}
					if Decimal(v) != c {
						t.Errorf("%s %s row %d %s: %q is not rounded (%s)", name, file, i+2, rows[0][j], c, Decimal(v))
					}
				}
			}
		}
	}
}

// TestCSVResultsComplete: results.csv holds every number of a result's
// metrics: its rows of one result give back Metrics.Value's figures.
func TestCSVResultsComplete(t *testing.T) {
	in := exportRuns(t)["summaries"]
	rows := CSVTables([]Input{in})["results.csv"]
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	r := in.Run.Results[0]
	got := map[string]string{}
	for _, row := range rows[1:] {
		if row[col["network"]] == r.Network && row[col["workload"]] == r.Workload && row[col["placement"]] == r.Placement && row[col["round"]] == strconv.Itoa(r.Round) && row[col["step"]] == r.Step {
			got[row[col["figure"]]] = row[col["value"]]
		}
	}
	for _, f := range append(FiguresOf(r.Workload), result.FigLatency("max"), result.FigLatency("mean")) {
		v, ok := r.Metrics.Value(f.Key)
		if !ok {
			continue
		}
		if got[f.Key] != Decimal(v) {
			t.Errorf("results.csv %s = %q, the result holds %v", f.Key, got[f.Key], v)
		}
	}
	if len(got) < 5 {
		t.Errorf("results.csv has %d figures of the result: %v", len(got), got)
	}
}

// TestOutputsCheck: a path that cannot be written is refused before any
// work, with the flag, the path and the fix in one line.
func TestOutputsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Outputs
		want string // "" = accepted
	}{
		{Outputs{CSV: filepath.Join(dir, "new"), OpenMetrics: filepath.Join(dir, "m.prom"), NDJSON: file, HTML: filepath.Join(dir, "r.html")}, ""},
		{Outputs{CSV: dir}, ""},
		{Outputs{CSV: file}, "--csv " + file + ": not a folder; name a folder"},
		{Outputs{CSV: filepath.Join(dir, "no", "csv")}, "folder " + filepath.Join(dir, "no") + " does not exist"},
		{Outputs{OpenMetrics: filepath.Join(dir, "no", "m.prom")}, "--openmetrics"},
		{Outputs{OpenMetrics: dir}, "not a regular file; choose a file path such as cnperf.prom"},
		{Outputs{NDJSON: "/proc/cnperf.ndjson"}, "cannot write under /proc"},
		{Outputs{HTML: filepath.Join(dir, "no", "r.html")}, "--html"},
	} {
		err := c.o.Check(nil, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.o, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: %v, want one line with %q", c.o, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("Check left files behind: %v", ents)
	}
}
