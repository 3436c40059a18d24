package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
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
	var rows kit.Rows[key, acc]
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
		a := rows.Get(key{ck, prof}, func() acc { return acc{fig: FiguresOf(r.Workload)[0]} })
		a.tuned = append(a.tuned, v)
		if r.VsUntuned != nil {
			a.vs = r.VsUntuned
		}
	}
	if len(rows.Keys) == 0 {
		return
	}
	tw := kit.TextTable(w, "tuning (seed 000's host tuning inside the lab): the main figure untuned and tuned (same rounds), the change and its 95% interval",
		"network\tplacement\tworkload\tstep\ttuning\tnone\ttuned\tchange")
	for k, a := range rows.All() {
		var ps []float64
		for _, v := range plain[k.cell] {
			ps = append(ps, v)
		}
		none := "-"
		if len(ps) > 0 {
			none = format(a.fig, stats.Median(ps))
		}
		ch := "-"
		if a.vs != nil {
			ch = kit.Percent(*a.vs, func(r float64) float64 { return (r - 1) * 100 }, "%+.1f")
		}
		step := k.cell.Step
		if step == "" {
			step = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s %s\t%s\t%s\n", k.cell.Network, k.cell.Placement, k.cell.Workload, step, k.profile,
			none, a.fig.Label, format(a.fig, stats.Median(a.tuned)), ch)
	}
	tw.Flush()
	fmt.Fprintln(w, "change: tuned against none (the geometric mean of the per-round ratios, minus 1; the median in files written before it); no mark: differs, =: equivalent (within 5 %), ?: undecided; what each profile did is in the JSON's environment.tunings")
}
