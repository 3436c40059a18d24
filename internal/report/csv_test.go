package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func csvText(t *testing.T, tables map[string][][]string) string {
	t.Helper()
	var names []string
	for n := range tables {
		names = append(names, n)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString("== " + n + " ==\n")
		w := csv.NewWriter(&b)
		if err := w.WriteAll(tables[n]); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestGoldenCSV locks the CSV files of stored runs: one run with
// summaries and skipped cells, and two overlaid (the "file" column).
func TestGoldenCSV(t *testing.T) {
	for _, c := range []struct {
		name string
		runs []string
	}{
		{"summaries.csv", []string{"summaries"}},
		{"startup.csv", []string{"startup"}},
		{"overlay.csv", []string{"startup", "reference"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkGolden(t, c.name, []byte(csvText(t, CSVTables(readInputs(t, c.runs...)))))
		})
	}
}

// TestCSVColumnsAreJSONFields: every column of results and summaries is a
// field path of the JSON the row came from, with the same value.
func TestCSVColumnsAreJSONFields(t *testing.T) {
	ins := readInputs(t, "summaries")
	tables := CSVTables(ins)
	rows := tables["results-tcp_rr.csv"]
	if len(rows) < 2 {
		t.Fatalf("results-tcp_rr.csv: %d rows", len(rows))
	}
	var first map[string]any
	b, _ := json.Marshal(ins[0].Run.Results[0])
	json.Unmarshal(b, &first)
	lookup := func(m map[string]any, path string) (any, bool) {
		var cur any = m
		for path != "" {
			mm, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			// a key may itself hold dots (latency_us.p99.9): try the longest
			found := false
			for i := len(path); i > 0; i-- {
				if i < len(path) && path[i] != '.' {
					continue
				}
				if v, ok := mm[path[:i]]; ok {
					cur, path, found = v, strings.TrimPrefix(path[i:], "."), true
					break
				}
			}
			if !found {
				return nil, false
			}
		}
		return cur, true
	}
	for i, col := range rows[0] {
		v, ok := lookup(first, col)
		if !ok {
			if rows[1][i] != "" {
				t.Errorf("column %q is not a JSON field of the result", col)
			}
			continue
		}
		if got, _ := json.Marshal(v); strings.Trim(string(got), `"`) != rows[1][i] {
			t.Errorf("column %q = %q, JSON has %s", col, rows[1][i], got)
		}
	}
	dir := t.TempDir()
	files, err := WriteCSV(filepath.Join(dir, "csv"), ins)
	if err != nil || len(files) != len(tables) {
		t.Fatalf("WriteCSV: %v files, %v", files, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "csv", "summaries.csv")); err != nil {
		t.Error(err)
	}
}
