package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CSV files are one per kind of record in a run file: results-WORKLOAD.csv
// per workload (its results share their columns), summaries.csv,
// skipped.csv and environment.csv. A column is named by the JSON field's
// path, nested names joined by dots ("metrics.latency_us.p99",
// "params.message_size", "vs_baseline.ci_low"). Encoded histograms are left
// out (they are in the JSON). Columns are in the order the fields first
// appear (JSON order; map keys sorted, as encoding/json writes them); a
// field a row lacks is empty. With several run files, a first column "file"
// names the run each row came from.

// WriteCSV writes the CSV files of runs into dir, creating it, and
// returns the paths it wrote.
func WriteCSV(dir string, ins []Input) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--csv %s: %v; choose a folder you can write", dir, err)
	}
	tables := CSVTables(ins)
	var names []string
	for name := range tables {
		names = append(names, name)
	}
	slices.Sort(names)
	var paths []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll(tables[name]); err != nil {
			return paths, err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return paths, fmt.Errorf("--csv %s: %v", dir, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// CSVTables lays out the CSV files of runs: file name to rows, the first
// row the header.
func CSVTables(ins []Input) map[string][][]string {
	overlay := len(ins) > 1
	type acc struct {
		cols []string
		rows []map[string]string
	}
	files := map[string]*acc{}
	add := func(name, run string, v any) {
		a := files[name]
		if a == nil {
			a = &acc{}
			files[name] = a
		}
		row := map[string]string{}
		if overlay {
			row["file"] = run
			if !slices.Contains(a.cols, "file") {
				a.cols = append(a.cols, "file")
			}
		}
		for _, kv := range flatten(v) {
			if kv[0] == "histogram" || strings.HasPrefix(kv[0], "metrics.histograms.") {
				continue
			}
			row[kv[0]] = kv[1]
			if !slices.Contains(a.cols, kv[0]) {
				a.cols = append(a.cols, kv[0])
			}
		}
		a.rows = append(a.rows, row)
	}
	for _, in := range ins {
		for _, r := range in.Run.Results {
			add("results-"+fileSafe(r.Workload)+".csv", in.Name, r)
		}
		for _, s := range in.Run.Summaries {
			add("summaries.csv", in.Name, s)
		}
		for _, s := range in.Run.Skipped {
			add("skipped.csv", in.Name, s)
		}
		add("environment.csv", in.Name, in.Run.Environment)
	}
	out := map[string][][]string{}
	for name, a := range files {
		cols := a.cols
		t := [][]string{cols}
		for _, r := range a.rows {
			line := make([]string, len(cols))
			for i, c := range cols {
				line[i] = r[c]
			}
			t = append(t, line)
		}
		out[name] = t
	}
	return out
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
