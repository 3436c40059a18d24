package measure

import (
	"math"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload"
)

func TestMergeReports(t *testing.T) {
	h1, h2 := hist.New(), hist.New()
	h1.Record(time.Millisecond)
	h2.Record(3 * time.Millisecond)
	h2.Record(3 * time.Millisecond)
	e1, _ := h1.Encode()
	e2, _ := h2.Encode()
	m := MergeReports([]workload.Report{
		{Transactions: 10, Seconds: 1.0, CPUSeconds: 0.5, Histogram: e1, Extra: map[string]float64{"connects": 3}},
		{Transactions: 5, Seconds: 1.2, CPUSeconds: 0.25, Histogram: e2, Extra: map[string]float64{"connects": 4}},
	})
	if m.Transactions != 15 || m.Seconds != 1.2 || m.CPUSeconds != 0.75 || m.Extra["connects"] != 7 {
		t.Errorf("merged %+v", m)
	}
	h, err := hist.Decode(m.Histogram)
	if err != nil || h.Count() != 3 {
		t.Errorf("merged histogram: %v count %d, want 3", err, h.Count())
	}
}

func TestJain(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{3, 1}, 16.0 / 20},
		{[]float64{0, 0}, 0},
	} {
		if got := Jain(tc.xs); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("Jain(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestCost(t *testing.T) {
	delta := ground.CPUTimes{User: 1, System: 2, SoftIRQ: 0.5, KSoftirqd: 0.2}
	bytes := result.Metrics{Bytes: result.I(1e9)}
	trans := result.Metrics{Transactions: result.I(1e6)}
	for _, c := range []struct {
		name            string
		m               result.Metrics
		agents, daemons float64
		machine, cell   float64 // per byte (ns) or per transaction (µs)
		noCell          bool
	}{
		{"bytes, daemons", bytes, 1, 0.5, 3.5, 1.7, false},
		{"bytes, no daemons metered", bytes, 1, -1, 3.5, 1.2, false},
		{"transactions", trans, 1, 0, 3.5, 1.2, false},
		{"no agents' figure", bytes, 0, 0.5, 3.5, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Cost(delta, 2*time.Second, c.agents, c.daemons, c.m)
			machine, cell := got.NsPerByte, got.CellNsPerByte
			if c.m.Transactions != nil {
				machine, cell = got.UsPerTrans, got.CellUsPerTrans
			}
			if machine == nil || math.Abs(*machine-c.machine) > 1e-9 {
				t.Errorf("machine figure %v, want %v", machine, c.machine)
			}
			if c.noCell {
				if cell != nil || got.CellS != nil {
					t.Errorf("a cell figure without the agents': %v", *cell)
				}
				return
			}
			if cell == nil || math.Abs(*cell-c.cell) > 1e-9 {
				t.Errorf("cell figure %v, want %v", cell, c.cell)
			}
		})
	}
}
