package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
)

// tuningOf splits a step into the step without its "tuning=NAME" and NAME.
func tuningOf(step string) (rest, profile string) {
	var keep []string
	for _, f := range strings.Fields(step) {
		if v, ok := strings.CutPrefix(f, "tuning="); ok {
			profile = v
			continue
		}
		keep = append(keep, f)
	}
	return strings.Join(keep, " "), profile
}

// Tuning writes, for results measured with a --tuning profile beside the
// same cell untuned, the main figure of both (medians over rounds) and
// the change with its 95 % interval from the paired ratio (VsUntuned).
func Tuning(w io.Writer, run *result.Run) {
	type key struct {
		cell    result.CellKey // step without the tuning
		profile string
	}
	type acc struct {
		fig          result.Figure
		tuned, plain []float64
		vs           *result.Comparison
	}
	var order []key
	by := map[key]*acc{}
	plain := map[result.CellKey]map[int]float64{}
	for _, r := range run.Results {
		rest, prof := tuningOf(r.Step)
		if r.Error != "" || prof == "" || searchStep(rest) {
			continue
		}
		ck := r.Key()
		ck.Step = rest
		v, ok := r.Metrics.Value(FiguresOf(r.Workload)[0].Key)
		if !ok {
			continue
		}
		if prof == "none" {
			if plain[ck] == nil {
				plain[ck] = map[int]float64{}
			}
			plain[ck][r.Round] = v
			continue
		}
		k := key{ck, prof}
		a := by[k]
		if a == nil {
			a = &acc{fig: FiguresOf(r.Workload)[0]}
			by[k] = a
			order = append(order, k)
		}
		a.tuned = append(a.tuned, v)
		if r.VsUntuned != nil {
			a.vs = r.VsUntuned
		}
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntuning (seed 000's host tuning inside the lab): the main figure untuned and tuned (same rounds), the change and its 95% interval")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "network\tplacement\tworkload\tstep\ttuning\tnone\ttuned\tchange")
	for _, k := range order {
		a := by[k]
		var ps []float64
		for _, v := range plain[k.cell] {
			ps = append(ps, v)
		}
		none := "-"
		if len(ps) > 0 {
			none = format(a.fig, median(ps))
		}
		ch := "-"
		if a.vs != nil {
			pct := func(r float64) float64 { return (r - 1) * 100 }
			ch = fmt.Sprintf("%+.1f%%", pct(a.vs.Ratio))
			if a.vs.CILevel > 0 {
				lo, hi := pct(a.vs.CILow), pct(a.vs.CIHigh)
				ch += fmt.Sprintf(" [%+.1f, %+.1f]", math.Min(lo, hi), math.Max(lo, hi))
			}
			ch = verdictMark(*a.vs) + ch
		}
		step := k.cell.Step
		if step == "" {
			step = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s %s\t%s\t%s\n", k.cell.Network, k.cell.Placement, k.cell.Workload, step, k.profile,
			none, a.fig.Label, format(a.fig, median(a.tuned)), ch)
	}
	tw.Flush()
	fmt.Fprintln(w, "change: tuned against none (the geometric mean of the per-round ratios, minus 1; the median in files written before it); no mark: differs, =: equivalent (within 5 %), ?: undecided; what each profile did is in the JSON's environment.tunings")
}
