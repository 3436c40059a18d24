package speed

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
)

// witnessCSV is the investigation's data: one line per cell of the runs
// docs/validation.md names ("The machine's speed beside every cell"),
// with the stream's figures and every witness candidate.
const witnessCSV = "../../docs/examples/speed-witness.csv"

type cellRow struct {
	run, mode, cell                      string
	load, gbps, cpuB, share, steal, spin float64
	xfer, bounce                         float64 // 0: the pair probe failed
}

func readWitnessCSV(t *testing.T) []cellRow {
	f, err := os.Open(witnessCSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		if s == "" {
			return 0
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	var out []cellRow
	for _, r := range recs[1:] {
		// run,mode,load1,network,workload,round,gbps,cell_ns_per_byte,share,steal_cpus,spin_ns,xfer_ns,bounce_ns
		out = append(out, cellRow{run: r[0], mode: r[1], cell: r[0] + " " + r[3] + " " + r[4], load: num(r[2]),
			gbps: num(r[6]), cpuB: num(r[7]), share: num(r[8]), steal: num(r[9]), spin: num(r[10]), xfer: num(r[11]), bounce: num(r[12])})
	}
	return out
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i]/n, my+y[i]/n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestWitnessInvestigation regenerates docs/validation.md's table of
// which witness predicts a stream's speed: over every cell of the
// investigation runs, the correlation of log(throughput ÷ the cell's
// median over its rounds), and of log(CPU per byte ÷ its median), with
// each candidate. `go test -run WitnessInvestigation -v ./internal/speed`
// prints it; the test fails when a number differs from the one the doc
// states (want).
func TestWitnessInvestigation(t *testing.T) {
	rows := readWitnessCSV(t)
	medThr, medCPU := map[string][]float64{}, map[string][]float64{}
	for _, r := range rows {
		medThr[r.cell] = append(medThr[r.cell], r.gbps)
		medCPU[r.cell] = append(medCPU[r.cell], r.cpuB)
	}
	type cand struct {
		name string
		of   func(cellRow) (float64, bool)
	}
	lg := func(v float64) (float64, bool) { return math.Log(v), v > 0 }
	cands := []cand{
		{"share", func(r cellRow) (float64, bool) { return lg(math.Max(r.share, 0.01)) }},
		{"xfer", func(r cellRow) (float64, bool) { return lg(r.xfer) }},
		{"bounce", func(r cellRow) (float64, bool) { return lg(r.bounce) }},
		{"spin", func(r cellRow) (float64, bool) { return lg(r.spin) }},
		{"steal", func(r cellRow) (float64, bool) { return r.steal, true }},
		{"load1", func(r cellRow) (float64, bool) { return r.load, true }},
	}
	// want: the doc's numbers, by mode and candidate: the correlation
	// with the throughput, then with the CPU per byte
	want := map[string]map[string][2]float64{
		"unpinned": {"share": {+0.74, +0.19}, "xfer": {-0.06, +0.14}, "bounce": {-0.07, +0.13}, "spin": {+0.03, +0.01}, "steal": {+0.01, +0.15}, "load1": {-0.15, +0.04},
			"slow xfer": {0.89, 1.03}, "low share": {0.64, 0.98}, "slope on share": {0.93, 0}},
		"pinned": {"share": {+0.53, -0.19}, "xfer": {+0.00, +0.14}, "bounce": {+0.01, +0.12}, "spin": {+0.00, -0.11}, "steal": {+0.08, +0.06}, "load1": {-0.18, +0.09},
			"slow xfer": {0.98, 1.04}, "low share": {0.53, 1.05}, "slope on share": {1.03, 0}},
		"rt-unpinned": {"share": {+0.01, +0.01}, "xfer": {-0.61, +0.59}, "bounce": {-0.60, +0.56}, "spin": {+0.09, -0.13}, "steal": {-0.28, +0.25}, "load1": {+0.08, -0.16}},
	}
	got := map[string]map[string][2]float64{}
	var modes []string
	for _, r := range rows {
		if !slices.Contains(modes, r.mode) {
			modes = append(modes, r.mode)
		}
	}
	for _, m := range modes {
		got[m] = map[string][2]float64{}
		var n int
		for _, c := range cands {
			var x, yt, yc []float64
			for _, r := range rows {
				v, ok := c.of(r)
				if r.mode != m || !ok {
					continue
				}
				x = append(x, v)
				yt = append(yt, math.Log(r.gbps/median(medThr[r.cell])))
				yc = append(yc, math.Log(r.cpuB/median(medCPU[r.cell])))
			}
			n = max(n, len(x))
			got[m][c.name] = [2]float64{pearson(x, yt), pearson(x, yc)}
		}
		line := fmt.Sprintf("%-14s %3d cells:", m, n)
		for _, c := range cands {
			line += fmt.Sprintf(" %s %+.2f/%+.2f", c.name, got[m][c.name][0], got[m][c.name][1])
		}
		t.Log(line)
		// the same as classes: the cells of the slow copy between CPUs
		// (xfer over 15 µs) against the fast, and of the lower half of
		// the CPU share against the upper: the geometric mean of their
		// throughput and CPU per byte against their cell's median
		class := func(name string, in func(cellRow) (bool, bool)) {
			var a, b [2][]float64
			for _, r := range rows {
				which, ok := in(r)
				if r.mode != m || !ok {
					continue
				}
				t := math.Log(r.gbps / median(medThr[r.cell]))
				c := math.Log(r.cpuB / median(medCPU[r.cell]))
				if which {
					a[0], a[1] = append(a[0], t), append(a[1], c)
				} else {
					b[0], b[1] = append(b[0], t), append(b[1], c)
				}
			}
			gm := func(xs []float64) float64 {
				var s float64
				for _, x := range xs {
					s += x
				}
				return math.Exp(s / float64(len(xs)))
			}
			got[m][name] = [2]float64{gm(a[0]) / gm(b[0]), gm(a[1]) / gm(b[1])}
			t.Logf("%-14s %s: %d cells against %d: throughput %.2fx, CPU per byte %.2fx", m, name, len(a[0]), len(b[0]), got[m][name][0], got[m][name][1])
		}
		var shares []float64
		for _, r := range rows {
			if r.mode == m {
				shares = append(shares, r.share)
			}
		}
		half := median(shares)
		// the slope of log throughput on log share within cells
		cellsOf := map[string][][2]float64{}
		for _, r := range rows {
			if r.mode == m {
				cellsOf[r.cell] = append(cellsOf[r.cell], [2]float64{math.Log(math.Max(r.share, 0.01)), math.Log(r.gbps)})
			}
		}
		var sxy, sxx float64
		for _, ps := range cellsOf {
			var mx, my float64
			for _, p := range ps {
				mx, my = mx+p[0]/float64(len(ps)), my+p[1]/float64(len(ps))
			}
			for _, p := range ps {
				sxy += (p[0] - mx) * (p[1] - my)
				sxx += (p[0] - mx) * (p[0] - mx)
			}
		}
		got[m]["slope on share"] = [2]float64{sxy / sxx, 0}
		t.Logf("%-14s slope of log throughput on log share, within cells: %.2f", m, sxy/sxx)
		class("slow xfer", func(r cellRow) (bool, bool) { return r.xfer > 15000, r.xfer > 0 })
		class("low share", func(r cellRow) (bool, bool) { return r.share < half, true })
	}
	for m, cs := range want {
		for c, w := range cs {
			g := got[m][c]
			if math.Abs(g[0]-w[0]) > 0.005 || math.Abs(g[1]-w[1]) > 0.005 {
				t.Errorf("%s %s: %+.2f/%+.2f, the doc says %+.2f/%+.2f", m, c, g[0], g[1], w[0], w[1])
			}
		}
	}
}
