package report

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

// Flows writes, for results of several flows at once (--parallel), the
// share each flow got: per cell the aggregate of the workload's main
// figure, the smallest and largest flow's, and Jain's fairness index (1:
// every flow the same; 1/n: one flow got everything), medians over rounds.
func Flows(w io.Writer, run *result.Run) {
	type acc struct {
		key                 result.CellKey
		flows               int
		fig                 result.Figure
		total, lo, hi, jain []float64
	}
	var order []result.CellKey
	by := map[result.CellKey]*acc{}
	for _, r := range run.Results {
		if r.Error != "" || len(r.Flows) < 2 {
			continue
		}
		k := r.Key()
		a := by[k]
		if a == nil {
			a = &acc{key: k, flows: len(r.Flows), fig: FiguresOf(r.Workload)[0]}
			by[k] = a
			order = append(order, k)
		}
		tot, ok := r.Metrics.Value(a.fig.Key)
		if !ok {
			continue
		}
		a.total = append(a.total, tot)
		a.lo = append(a.lo, r.Metrics.Extra[result.ExtraFlowMin])
		a.hi = append(a.hi, r.Metrics.Extra[result.ExtraFlowMax])
		a.jain = append(a.jain, r.Metrics.Extra[result.ExtraJain])
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\nparallel flows: the aggregate, the smallest and largest flow, Jain's fairness (1 = equal shares)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "network\tplacement\tworkload\tflows\ttotal\tmin flow\tmax flow\tJain")
	for _, k := range order {
		a := by[k]
		if len(a.total) == 0 {
			continue
		}
		unit := a.fig.Label
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s %s\t%s\t%s\t%.3f\n", k.Network, k.Placement, k.Workload, a.flows,
			format(a.fig, median(a.total)), unit, format(a.fig, median(a.lo)), format(a.fig, median(a.hi)), median(a.jain))
	}
	tw.Flush()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
