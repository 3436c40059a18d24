package sizes

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// The report's table of a message-size sweep, under the main table (the
// page's figures against message size are report's: they overlay runs of
// one size each too).
func init() { section.Register(section.Info{Name: "sizes", Text: Text, TextRank: 30}) }

// Text writes a message-size sweep as the paper's figure reads: a row per
// network, placement and workload, a column per size, each the median over
// rounds of the workload's main figure; then how much the figure grew
// from the smallest size to the largest (the median of the per-round
// growths) and that growth against the baseline's in the same placement,
// paired by round, with its 95 % interval: the paper's "overlays grow
// least with message size" as a tested figure.
func Text(w io.Writer, run *result.Run) {
	type rowKey struct{ network, placement, workload string }
	var sw section.Sweep[rowKey]
	for _, r := range run.Results {
		// a sweep's step names the message size its result was measured
		// at (a load step's size=N is a response size: not a sweep)
		n := section.SizeOf(r.Step)
		if n == 0 || r.Error != "" || fmt.Sprint(r.Params["message_size"]) != strconv.Itoa(n) {
			continue
		}
		if v, ok := r.Metrics.Value(workload.FiguresOf(r.Workload)[0].Key); ok {
			sw.Add(rowKey{r.Network, r.Placement, r.Workload}, n, r.Round, v)
		}
	}
	rows, sizes := slices.Clone(sw.Rows()), sw.Cols()
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].workload < rows[j].workload })
	lo, hi := sizes[0], sizes[len(sizes)-1]
	// growth per round: the figure at the largest size over the smallest
	growth := func(k rowKey) map[int]float64 {
		x, y := sw.At(k, hi, lo)
		for round := range x {
			x[round] /= y[round]
		}
		return x
	}
	head := "workload\tnetwork\tplacement" + sw.Head()
	if len(sizes) > 1 {
		head += fmt.Sprintf("\tgrowth %d->%d\tvs baseline [95%%]", lo, hi)
	}
	tw := section.TextTable(w, "by message size (bytes): each workload's main figure, medians over rounds", head)
	for _, k := range rows {
		f := workload.FiguresOf(k.workload)[0]
		line := k.workload + " " + f.Label + "\t" + k.network + "\t" + k.placement + sw.Medians(k, f)
		if len(sizes) > 1 {
			line += "\t" + growthCells(growth(k), growth(rowKey{result.BaselineNetwork, k.placement, k.workload}), k.network == result.BaselineNetwork)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(sizes) > 1 {
		fmt.Fprintln(w, "growth: the figure at the largest size over the smallest, the median of the rounds'; vs baseline: that growth over the baseline's (same placement, paired by round), the geometric mean of the per-round ratios with its 95% interval; no mark: differs, =: equivalent (within 5 %), ?: undecided")
	}
}

// growthCells formats a row's growth and its ratio to the baseline's,
// paired by round.
func growthCells(g, base map[int]float64, isBase bool) string {
	if len(g) == 0 {
		return "-\t-"
	}
	out := fmt.Sprintf("%.1fx", stats.Median(slices.Collect(maps.Values(g))))
	if isBase {
		return out + "\t-"
	}
	return out + "\t" + section.PairedFactor(g, base, result.HigherBetter)
}
