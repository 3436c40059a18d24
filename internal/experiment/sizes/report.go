package sizes

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

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
	var rows []rowKey
	vals := map[rowKey]map[int][]float64{}
	byRound := map[rowKey]map[int]map[int]float64{} // row -> round -> size -> value
	seen := map[int]bool{}
	var sizes []int
	for _, r := range run.Results {
		// a sweep's step names the message size its result was measured
		// at (a load step's size=N is a response size: not a sweep)
		n := section.SizeOf(r.Step)
		if n == 0 || r.Error != "" || fmt.Sprint(r.Params["message_size"]) != strconv.Itoa(n) {
			continue
		}
		v, ok := r.Metrics.Value(workload.FiguresOf(r.Workload)[0].Key)
		if !ok {
			continue
		}
		k := rowKey{r.Network, r.Placement, r.Workload}
		if vals[k] == nil {
			vals[k] = map[int][]float64{}
			rows = append(rows, k)
		}
		vals[k][n] = append(vals[k][n], v)
		if byRound[k] == nil {
			byRound[k] = map[int]map[int]float64{}
		}
		if byRound[k][r.Round] == nil {
			byRound[k][r.Round] = map[int]float64{}
		}
		byRound[k][r.Round][n] = v
		if !seen[n] {
			seen[n] = true
			sizes = append(sizes, n)
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.Ints(sizes)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].workload < rows[j].workload })
	lo, hi := sizes[0], sizes[len(sizes)-1]
	// growth per round: the figure at the largest size over the smallest
	growth := func(k rowKey) map[int]float64 {
		out := map[int]float64{}
		for round, bySize := range byRound[k] {
			a, b := bySize[hi], bySize[lo]
			if a > 0 && b > 0 {
				out[round] = a / b
			}
		}
		return out
	}
	fmt.Fprintln(w, "\nby message size (bytes): each workload's main figure, medians over rounds")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "workload\tnetwork\tplacement"
	for _, s := range sizes {
		head += "\t" + strconv.Itoa(s)
	}
	if len(sizes) > 1 {
		head += fmt.Sprintf("\tgrowth %d->%d\tvs baseline [95%%]", lo, hi)
	}
	fmt.Fprintln(tw, head)
	for _, k := range rows {
		f := workload.FiguresOf(k.workload)[0]
		line := k.workload + " " + f.Label + "\t" + k.network + "\t" + k.placement
		for _, s := range sizes {
			if xs := vals[k][s]; len(xs) > 0 {
				line += "\t" + section.Format(f, section.Median(xs))
			} else {
				line += "\t-"
			}
		}
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
	var gs []float64
	for _, v := range g {
		gs = append(gs, v)
	}
	out := fmt.Sprintf("%.1fx", section.Median(gs))
	if isBase {
		return out + "\t-"
	}
	var rounds []int
	for round := range g {
		if _, ok := base[round]; ok {
			rounds = append(rounds, round)
		}
	}
	sort.Ints(rounds)
	var a, b []float64
	for _, round := range rounds {
		a, b = append(a, g[round]), append(b, base[round])
	}
	c, ok := stats.Paired(a, b, result.HigherBetter, stats.Default)
	if !ok {
		return out + "\t-"
	}
	vs := fmt.Sprintf("%.2f", c.Ratio)
	if c.CILevel > 0 {
		vs += fmt.Sprintf(" [%.2f, %.2f]", c.CILow, c.CIHigh)
	}
	vs = section.VerdictMark(c) + vs
	return out + "\t" + vs
}
