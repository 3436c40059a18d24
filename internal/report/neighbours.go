package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

// Neighbours writes, for results measured beside noisy neighbours, the
// cell's main figure without and with them (medians over rounds), the
// drop with its 95 % interval from the paired ratio (VsQuiet), and the
// CPU the neighbours used.
func Neighbours(w io.Writer, run *result.Run) {
	type acc struct {
		key          result.CellKey
		fig          result.Figure
		quiet, noisy []float64
		cpu          []float64
		vs           *result.Comparison
	}
	var order []result.CellKey
	by := map[result.CellKey]*acc{}
	for _, r := range run.Results {
		q, ok := r.Metrics.Extra[result.ExtraQuiet]
		if r.Error != "" || !ok {
			continue
		}
		k := r.Key()
		a := by[k]
		if a == nil {
			a = &acc{key: k, fig: FiguresOf(r.Workload)[0]}
			by[k] = a
			order = append(order, k)
		}
		v, _ := r.Metrics.Value(a.fig.Key)
		a.quiet, a.noisy = append(a.quiet, q), append(a.noisy, v)
		if c, ok := r.Metrics.Extra[result.ExtraNeighbourCPU]; ok {
			a.cpu = append(a.cpu, c)
		}
		if r.VsQuiet != nil {
			a.vs = r.VsQuiet
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnoisy neighbours: the main figure without and with them (same rounds), the drop and its 95% interval")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "network\tplacement\tworkload\tneighbours\tquiet\twith\tdrop\tneighbour CPU")
	for _, k := range order {
		a := by[k]
		d := "-"
		if a.vs != nil {
			conv := func(r float64) float64 {
				if a.fig.Better == result.LowerBetter {
					return (r - 1) * 100
				}
				return (1 - r) * 100
			}
			d = fmt.Sprintf("%.1f%%", conv(a.vs.Ratio))
			if a.vs.CILevel > 0 {
				lo, hi := conv(a.vs.CILow), conv(a.vs.CIHigh)
				d += fmt.Sprintf(" [%.1f, %.1f]", math.Min(lo, hi), math.Max(lo, hi))
			}
			if !a.vs.Significant {
				d = "≈" + d
			}
		}
		cpu := "-"
		if len(a.cpu) > 0 {
			cpu = fmt.Sprintf("%.2f CPU", median(a.cpu))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\n", k.Network, k.Placement, k.Workload, k.Step,
			format(a.fig, median(a.quiet)), a.fig.Label, format(a.fig, median(a.noisy)), d, cpu)
	}
	tw.Flush()
	fmt.Fprintln(w, "drop: how much worse with the neighbours (the median of the per-round ratios); ≈: not significant")
}
