package bpfcost

import (
	"bytes"
	"testing"
	"time"
)

// Diff counts what ran between two snapshots, a new program from zero,
// an id reused by another program as new, and leaves out what did not run.
func TestDiff(t *testing.T) {
	before := []Prog{
		{ID: 1, Name: "cil_from_contai", Runs: 100, Runtime: 100 * time.Microsecond},
		{ID: 2, Name: "idle", Runs: 5, Runtime: time.Microsecond},
		{ID: 3, Name: "old", Runs: 50, Runtime: 50 * time.Microsecond},
	}
	after := []Prog{
		{ID: 1, Name: "cil_from_contai", Runs: 1100, Runtime: 400 * time.Microsecond},
		{ID: 2, Name: "idle", Runs: 5, Runtime: time.Microsecond},
		{ID: 3, Name: "reused", Runs: 10, Runtime: 20 * time.Microsecond},
		{ID: 4, Name: "cnperf_from_pod", Runs: 2000, Runtime: 100 * time.Microsecond},
	}
	got := Diff(before, after)
	if len(got) != 3 {
		t.Fatalf("Diff: %+v", got)
	}
	want := []struct {
		id   uint32
		runs uint64
		ns   float64
	}{{1, 1000, 300}, {4, 2000, 50}, {3, 10, 2000}}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Runs != w.runs || got[i].NsPerRun != w.ns {
			t.Errorf("row %d: %+v, want id %d runs %d ns/run %.0f", i, got[i], w.id, w.runs, w.ns)
		}
	}
	var b bytes.Buffer
	Format(&b, got, []string{"cil_", "cnperf_"})
	const table = `id     program                  type                   runs     total ms     ns/run
1      cil_from_contai                                 1000          0.3        300
4      cnperf_from_pod                                 2000          0.1         50
`
	if b.String() != table {
		t.Errorf("Format:\n%s\nwant\n%s", b.String(), table)
	}
}
