package density

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
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
	var rows []rowKey
	vals := map[rowKey]map[int][]float64{}
	byRound := map[rowKey]map[int]map[int]float64{}
	seen := map[int]bool{}
	var counts []int
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
			v, ok := r.Metrics.Value(f.Key)
			if !ok {
				continue
			}
			k := rowKey{r.Network, r.Placement, r.Workload, f}
			if vals[k] == nil {
				vals[k] = map[int][]float64{}
				byRound[k] = map[int]map[int]float64{}
				rows = append(rows, k)
			}
			vals[k][n] = append(vals[k][n], v)
			if byRound[k][r.Round] == nil {
				byRound[k][r.Round] = map[int]float64{}
			}
			byRound[k][r.Round][n] = v
			if !seen[n] {
				seen[n] = true
				counts = append(counts, n)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.Ints(counts)
	lo, hi := counts[0], counts[len(counts)-1]
	fmt.Fprintln(w, "\nby density (idle pods on every host): medians over rounds")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "figure\tnetwork\tplacement"
	for _, c := range counts {
		head += "\t" + strconv.Itoa(c)
	}
	if len(counts) > 1 {
		head += fmt.Sprintf("\t%d vs %d [95%%]", hi, lo)
	}
	fmt.Fprintln(tw, head)
	for _, k := range rows {
		line := k.workload + " " + k.fig.Label + "\t" + k.network + "\t" + k.placement
		for _, c := range counts {
			if xs := vals[k][c]; len(xs) > 0 {
				line += "\t" + section.Format(k.fig, section.Median(xs))
			} else {
				line += "\t-"
			}
		}
		if len(counts) > 1 {
			line += "\t" + densityChange(byRound[k], lo, hi, k.fig.Better)
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

// densityChange is a row's ratio of the figure at count hi to count lo,
// paired by round.
func densityChange(byRound map[int]map[int]float64, lo, hi int, better result.Better) string {
	var rounds []int
	for r, m := range byRound {
		if m[lo] > 0 && m[hi] > 0 {
			rounds = append(rounds, r)
		}
	}
	sort.Ints(rounds)
	var a, b []float64
	for _, r := range rounds {
		a, b = append(a, byRound[r][hi]), append(b, byRound[r][lo])
	}
	c, ok := stats.Paired(a, b, better, stats.Default)
	if !ok {
		return "-"
	}
	return section.Ratio(c)
}
