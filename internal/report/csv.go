package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// CSV files are one per kind of record, each with a fixed set of columns
// (CSVColumns) whatever the run holds, so that a spreadsheet or a loader
// reads every run the same way:
//
//   - results.csv: one row per result (cell and round) and figure, the
//     figure named as Metrics.Value reads it ("latency_us.p99",
//     "cpu.cell_ns_per_byte", "extra.saturated"); a failed result with no
//     figures is one row with its error;
//   - params.csv: one row per result and parameter it ran with;
//   - summaries.csv: one row per cell and headline figure over the rounds,
//     with the ratio to the baseline (and to the lab's replica), its
//     interval and verdict;
//   - skipped.csv: what could not run here, and why;
//   - environment.csv: one row per field of the run's environment and
//     top-level fields (cnperf_version, started_at...), named by their
//     JSON path.
//
// Every row starts with the run file's name and its run id (RunID).
// Numbers are rounded to SignificantDigits (Decimal); a value that does not
// apply is empty. Encoded histograms are left out (they are in the JSON).

// cellColumns name a cell in results, params and summaries.
var cellColumns = []string{"file", "run_id", "network", "workload", "placement", "lb", "services", "step", "backend"}

// comparisonColumns are the columns of a Comparison in summaries.csv,
// after its prefix (vs_baseline., vs_replica.).
var comparisonColumns = []string{"against", "ratio", "ci_low", "ci_high", "p", "verdict", "direction", "rounds_needed", "speed"}

// CSVColumns are the columns of each CSV file, fixed per file.
var CSVColumns = map[string][]string{
	"results.csv":     append(slices.Clone(cellColumns), "round", "figure", "value", "error"),
	"params.csv":      append(slices.Clone(cellColumns), "round", "param", "value"),
	"summaries.csv":   summaryColumns(),
	"skipped.csv":     {"file", "run_id", "network", "workload", "placement", "reason"},
	"environment.csv": {"file", "run_id", "field", "value"},
}

func summaryColumns() []string {
	cs := append(slices.Clone(cellColumns), "figure", "label", "better", "n", "median", "ci_low", "ci_high", "ci_level", "ci_method", "cv")
	for _, p := range []string{"vs_baseline.", "vs_replica."} {
		for _, c := range comparisonColumns {
			cs = append(cs, p+c)
		}
	}
	return cs
}

// WriteCSV writes the CSV files of runs into dir, creating it, and
// returns the paths it wrote.
//
// Each file is written whole or not at all (cli.WriteFile); when one
// cannot be, a folder this call made is removed with the files it wrote.
func WriteCSV(dir string, ins []Input) (paths []string, err error) {
	undo, err := makeOutDir("--csv", dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			undo(paths)
			paths = nil
		}
	}()
	tables := CSVTables(ins)
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		p := filepath.Join(dir, name)
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll(tables[name]); err != nil {
			return paths, err
		}
		// each file whole or not at all: a full disk left a truncated
		// params.csv (issue 34 finding 6)
		if err := cli.WriteBytes("--csv", p, b.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// CSVTables lays out the CSV files of runs: file name to rows, the first
// row the header (CSVColumns). Every file is there, a kind of record the
// runs lack with its header alone.
func CSVTables(ins []Input) map[string][][]string {
	out := map[string][][]string{}
	for name, cols := range CSVColumns {
		out[name] = [][]string{cols}
	}
	add := func(name string, row ...string) { out[name] = append(out[name], row) }
	ids := runIDs(ins)
	for i, in := range ins {
		run := in.Run
		cell := func(k result.CellKey) []string {
			return []string{in.Name, ids[i], k.Network, k.Workload, k.Placement, k.LB, count0(k.Services), k.Step, backendName(k.Backend)}
		}
		for _, r := range run.Results {
			c := append(cell(r.Key()), count0(r.Round))
			leaves := metricLeaves(r)
			if len(leaves) == 0 {
				add("results.csv", append(slices.Clone(c), "", "", r.Error)...)
			}
			for _, kv := range leaves {
				add("results.csv", append(slices.Clone(c), kv[0], csvNumber(kv[1]), r.Error)...)
			}
			for _, kv := range flatten(r.Params) {
				add("params.csv", append(slices.Clone(c), kv[0], csvNumber(kv[1]))...)
			}
		}
		for _, s := range kit.Summaries(run) {
			f, _ := describe(s.Cell.Workload, s.Figure)
			row := append(cell(s.Cell), s.Figure, f.Label, string(f.Better), strconv.Itoa(s.N), Decimal(s.Median))
			if s.CILevel > 0 {
				row = append(row, Decimal(s.CILow), Decimal(s.CIHigh), Decimal(s.CILevel))
			} else {
				row = append(row, "", "", "")
			}
			row = append(row, s.CIMethod, Decimal(s.CV))
			row = append(row, comparisonCells(s.VsBaseline)...)
			row = append(row, comparisonCells(s.VsReplica)...)
			add("summaries.csv", row...)
		}
		for _, s := range run.Skipped {
			add("skipped.csv", in.Name, ids[i], s.Network, s.Workload, s.Placement, s.Reason)
		}
		top := struct {
			Schema       string               `json:"schema"`
			Version      string               `json:"cnperf_version"`
			StartedAt    any                  `json:"started_at"`
			FinishedAt   any                  `json:"finished_at,omitempty"`
			Command      []string             `json:"command,omitempty"`
			Rounds       int                  `json:"rounds,omitempty"`
			Incomplete   bool                 `json:"incomplete,omitempty"`
			CellsPlanned int                  `json:"cells_planned,omitempty"`
			CellsDone    int                  `json:"cells_done,omitempty"`
			Environment  result.Environment   `json:"environment"`
			MachineSpeed *result.SpeedSummary `json:"machine_speed,omitempty"`
		}{run.Schema, run.Version, run.StartedAt, nil, run.Command, run.Rounds, run.Incomplete, run.CellsPlanned, run.CellsDone, run.Environment, run.MachineSpeed}
		if !run.FinishedAt.IsZero() {
			top.FinishedAt = run.FinishedAt
		}
		for _, kv := range flatten(top) {
			add("environment.csv", in.Name, ids[i], kv[0], csvNumber(kv[1]))
		}
		for _, w := range run.Warnings {
			add("environment.csv", in.Name, ids[i], "warnings", w)
		}
	}
	return out
}

// comparisonCells are a Comparison's columns (comparisonColumns); all
// empty when there is none.
func comparisonCells(c *result.Comparison) []string {
	if c == nil {
		return make([]string, len(comparisonColumns))
	}
	lo, hi, p := "", "", ""
	if c.CILevel > 0 {
		lo, hi, p = Decimal(c.CILow), Decimal(c.CIHigh), Decimal(c.P)
	}
	speed := ""
	if c.Speed != nil {
		speed = c.Speed.Method
	}
	return []string{c.Against.Network, Decimal(c.Ratio), lo, hi, p, stats.VerdictOf(*c), c.Direction, count0(c.RoundsNeeded), speed}
}

// count0 prints a count, empty when 0 (absent in the JSON).
func count0(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// csvNumber rounds a JSON number's text (Decimal); other text is kept.
func csvNumber(s string) string {
	if v, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, "0123456789") && !strings.ContainsAny(s, " :") {
		return Decimal(v)
	}
	return s
}

// flatten lists v's JSON leaves as (dotted path, text) in the JSON's order.
func flatten(v any) [][2]string {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out [][2]string
	var walk func(prefix string) error
	walk = func(prefix string) error {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch x := t.(type) {
		case json.Delim:
			switch x {
			case '{':
				for d.More() {
					k, err := d.Token()
					if err != nil {
						return err
					}
					name := k.(string)
					if prefix != "" {
						name = prefix + "." + name
					}
					if err := walk(name); err != nil {
						return err
					}
				}
				_, err = d.Token() // }
				return err
			case '[':
				var parts []string
				for i := 0; d.More(); i++ {
					var raw json.RawMessage
					if err := d.Decode(&raw); err != nil {
						return err
					}
					var s string
					if json.Unmarshal(raw, &s) == nil {
						parts = append(parts, s)
					} else {
						parts = append(parts, string(raw))
					}
				}
				_, err = d.Token() // ]
				out = append(out, [2]string{prefix, strings.Join(parts, " ")})
				return err
			}
		case json.Number:
			out = append(out, [2]string{prefix, x.String()})
		case string:
			out = append(out, [2]string{prefix, x})
		case bool:
			out = append(out, [2]string{prefix, strconv.FormatBool(x)})
		case nil:
			out = append(out, [2]string{prefix, ""})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil
	}
	return out
}
