package report

import (
	"bytes"
	"encoding/csv"
	"slices"
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
