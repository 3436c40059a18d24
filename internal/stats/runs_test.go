package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
)

func TestCompareRuns(t *testing.T) {
	noise := []float64{1, 1.03, 0.97, 1.02, 0.98}
	mkRun := func(kernel string, cells map[string][2]float64, drift []float64) *result.Run {
		r := &result.Run{Schema: result.Schema, Environment: result.Environment{Kernel: kernel, CPUs: 2}}
		for _, n := range []string{"baseline", "bridge", "vxlan", "host"} {
			if v, ok := cells[n]; ok {
				r.Results = append(r.Results, rounds(n, v[0], v[1], drift)...)
			}
		}
		return r
	}
	type row struct {
		cell, fig, verdict string
		ratio              float64
		n                  int
	}
	cases := []struct {
		name             string
		old, new         *result.Run
		rows             []row
		onlyOld, onlyNew []string
		warn             string
		// the gate's regressions and undecided changes at 10 % and 30 %
		gate10, gate30 [2]int
	}{
		{
			name: "bridge 20 % slower, vxlan unchanged",
			old:  mkRun("6.1", map[string][2]float64{"baseline": {90000, 14}, "bridge": {80000, 18}, "vxlan": {60000, 30}}, noise),
			new:  mkRun("6.1", map[string][2]float64{"baseline": {90000, 14}, "bridge": {64000, 22.5}, "vxlan": {60000, 30}}, noise[1:]),
			rows: []row{
				{"bridge", result.KeyTransactions, "differs worse", 0.8, 4},
				{"bridge", "latency_us.p99", "differs worse", 1.25, 4},
				{"vxlan", result.KeyTransactions, Equivalent, 1, 4},
				{"baseline", result.KeyTransactions, Equivalent, 1, 4},
			},
			gate10: [2]int{2, 0}, gate30: [2]int{0, 1}, // p99 1.25x [1.19, 1.31]: not shown beyond 1.30
		},
		{
			name:    "cells in one file only, environments differ",
			old:     mkRun("6.1", map[string][2]float64{"baseline": {90000, 14}, "host": {90000, 14}}, noise),
			new:     mkRun("6.8", map[string][2]float64{"baseline": {99000, 13}, "vxlan": {60000, 30}}, noise),
			rows:    []row{{"baseline", result.KeyTransactions, "differs better", 1.1, 5}},
			onlyOld: []string{"host"}, onlyNew: []string{"vxlan"},
			warn:   `kernel "6.1" → "6.8"`,
			gate10: [2]int{0, 1}, gate30: [2]int{0, 1}, // host: only in old, not tested
		},
		{
			name:   "old files, one result per cell: a ratio, no test",
			old:    mkRun("6.1", map[string][2]float64{"bridge": {80000, 18}}, []float64{1}),
			new:    mkRun("6.1", map[string][2]float64{"bridge": {40000, 36}}, []float64{1}),
			rows:   []row{{"bridge", result.KeyTransactions, Undecided, 0.5, 1}},
			gate10: [2]int{0, 2}, gate30: [2]int{0, 2}, // trans/s and p99: no interval
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := CompareRuns(c.old, c.new, nil, Default)
			for _, w := range c.rows {
				var got *Change
				for i := range rc.Changes {
					if rc.Changes[i].Cell == key(w.cell) && rc.Changes[i].Figure.Key == w.fig {
						got = &rc.Changes[i]
					}
				}
				if got == nil {
					t.Fatalf("%s %s: no change in %+v", w.cell, w.fig, rc.Changes)
				}
				verdict := got.Change.Verdict
				if verdict == Differs {
					verdict += " " + got.Change.Direction
				}
				if verdict != w.verdict || math.Abs(got.Change.Ratio-w.ratio) > 0.02 || got.Change.N != w.n {
					t.Errorf("%s %s: %+v, want %s ratio ≈%g n %d", w.cell, w.fig, got.Change, w.verdict, w.ratio, w.n)
				}
			}
			names := func(ks []result.CellKey) (out []string) {
				for _, k := range ks {
					out = append(out, k.Network)
				}
				return out
			}
			if strings.Join(names(rc.OnlyOld), ",") != strings.Join(c.onlyOld, ",") || strings.Join(names(rc.OnlyNew), ",") != strings.Join(c.onlyNew, ",") {
				t.Errorf("only old %v, only new %v", rc.OnlyOld, rc.OnlyNew)
			}
			if w := strings.Join(rc.Warnings, "\n"); (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
				t.Errorf("warnings %q, want %q", w, c.warn)
			}
			for _, g := range []struct {
				limit float64
				want  [2]int
			}{{0.10, c.gate10}, {0.30, c.gate30}} {
				var got [2]int
				for _, j := range rc.Gate(g.limit) {
					switch j.Verdict {
					case GateRegression:
						got[0]++
					case GateUndecided:
						got[1]++
					}
				}
				if got != g.want {
					t.Errorf("gate at %g: %d regressions, %d undecided; want %v: %+v", g.limit, got[0], got[1], g.want, rc.Gate(g.limit))
				}
			}
			if _, err := json.Marshal(rc); err != nil {
				t.Fatal(err)
			}
		})
	}
}
