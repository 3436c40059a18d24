package density

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/workload"
)

// The report's section of the density experiment's results (steps
// "density=N"), under the table.
func init() { section.Register(section.Info{Name: "density", Text: Text, TextRank: 40}) }

// densityOf reads the idle pods a host carried from a result's step
// ("density=250", "density=250 ..."), -1 for a result of no density run.
func densityOf(step string) int {
	f := strings.Fields(step)
	if len(f) == 0 {
		return -1
	}
	v, ok := strings.CutPrefix(f[0], "density=")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// Text writes the density experiment: a row per network, placement
// and figure, a column per count of idle pods a host carried (medians over
// rounds), then the figure at the largest count against the smallest, the
// geometric mean of the per-round ratios with its 95 % interval (paired by
// round) and its verdict's mark: what the network's cost does as its nodes
// fill.
func Text(w io.Writer, run *result.Run) {
	type rowKey struct {
		network, placement, workload string
		fig                          result.Figure
	}
	var sw section.Sweep[rowKey]
	for _, r := range run.Results {
		n := densityOf(r.Step)
		if n < 0 || r.Error != "" {
			continue
		}
		figs := workload.FiguresOf(r.Workload)
		if len(figs) > 2 {
			figs = figs[:2]
		}
		for _, f := range figs {
			if v, ok := r.Metrics.Value(f.Key); ok {
				sw.Add(rowKey{r.Network, r.Placement, r.Workload, f}, n, r.Round, v)
			}
		}
	}
	rows, counts := sw.Rows(), sw.Cols()
	if len(rows) == 0 {
		return
	}
	lo, hi := counts[0], counts[len(counts)-1]
	head := "figure\tnetwork\tplacement" + sw.Head()
	if len(counts) > 1 {
		head += fmt.Sprintf("\t%d vs %d [95%%]", hi, lo)
	}
	tw := section.TextTable(w, "by density (idle pods on every host): medians over rounds", head)
	for _, k := range rows {
		line := k.workload + " " + k.fig.Label + "\t" + k.network + "\t" + k.placement + sw.Medians(k, k.fig)
		if len(counts) > 1 {
			x, y := sw.At(k, hi, lo) // the figure at the largest count over the smallest
			line += "\t" + section.PairedRatio(x, y, k.fig.Better)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if len(counts) > 1 {
		var titles []string
		var figs []result.Figure
		seen := map[string]bool{}
		for _, k := range rows {
			if t := k.workload + " " + k.fig.Label; !seen[t] {
				seen[t] = true
				titles, figs = append(titles, t), append(figs, k.fig)
			}
		}
		fmt.Fprintf(w, "%d vs %d: the figure beside %d idle pods a host over the same network's beside %d, the geometric mean of the rounds' ratios (paired by round, not the quotient of the medians shown) and its 95%% interval (paired t on log ratios); %s;\n", hi, lo, hi, lo, section.AboveOne(titles, figs))
		fmt.Fprintln(w, "no mark = differs (p<0.05 and the interval clear of [0.95, 1.05]), = equivalent (the whole interval inside it), ? undecided (neither shown; always so with one round)")
	}
}
