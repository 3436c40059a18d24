package blocking

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// The report's section of the experiment's results (workload Name),
// under the table.
func init() { section.Register(section.Info{Name: "blocking", Text: Text, TextRank: 70}) }

// Text writes seed 002's table: per network the balancer's mean
// blocking time to its backend and what the network costs beyond the
// baseline (the difference of the means, paired by round), as the study
// tabulated "average blocking time" and "Docker's own cost".
func Text(w io.Writer, run *result.Run) {
	type acc struct {
		requests                   int64
		errors                     int64
		means, ses, connects, p99s []float64
		diffs, diffCIs, cdiffs     []float64
		sat, rounds                int
	}
	var rows section.Rows[result.CellKey, acc]
	clientRate, asked := 0.0, 0.0
	for _, r := range run.Results {
		if r.Workload != Name || r.Error != "" {
			continue
		}
		a := rows.Get(r.Key(), nil)
		m := r.Metrics
		a.rounds++
		if m.Transactions != nil {
			a.requests += *m.Transactions
		}
		if m.Errors != nil {
			a.errors += *m.Errors
		}
		a.means = append(a.means, m.LatencyUs["mean"])
		a.p99s = append(a.p99s, m.LatencyUs["p99"])
		a.ses = append(a.ses, m.Extra[result.ExtraBlockingSE])
		a.connects = append(a.connects, m.Extra[result.ExtraConnectMean])
		if d, ok := m.Extra[result.ExtraBlockingDiff]; ok {
			a.diffs = append(a.diffs, d)
			a.diffCIs = append(a.diffCIs, m.Extra[result.ExtraBlockingDiffCI])
			a.cdiffs = append(a.cdiffs, m.Extra[result.ExtraConnectDiff])
		}
		if m.Extra[result.ExtraClientSat] == 1 {
			a.sat++
		}
		clientRate = m.Extra[result.ExtraClientRate]
		for _, k := range []string{"rate", "rate_asked"} {
			if v, ok := r.Params[k].(float64); ok {
				asked = v
			} else if v, ok := r.Params[k].(int); ok {
				asked = float64(v)
			}
		}
	}
	if len(rows.Keys) == 0 {
		return
	}
	order := slices.Clone(rows.Keys)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if pa, pb := section.PlacementOrder(a.Placement), section.PlacementOrder(b.Placement); pa != pb {
			return pa < pb
		}
		return a.Network == result.BaselineNetwork && b.Network != result.BaselineNetwork
	})
	type sumKey struct {
		cell   result.CellKey
		figure string
	}
	sums := map[sumKey]result.Summary{}
	for _, s := range run.Summaries {
		sums[sumKey{s.Cell, s.Figure}] = s
	}
	diffKey := result.ExtraKey(result.ExtraBlockingDiff)
	tw := section.TextTable(w, "blocking time (seed 002): one nginx balancer, the same requests split over every network at once",
		"network\tplacement\trequests\tblocking mean us (±SE a round)\tvs baseline us [95%]\tconnect mean us\tvs baseline\tp99 ms")
	maxSat, rounds := 0, 0
	for _, k := range order {
		a := rows.Of(k)
		maxSat, rounds = max(maxSat, a.sat), max(rounds, a.rounds)
		d := "-"
		if len(a.diffs) > 0 {
			med := stats.Median(a.diffs)
			lo, hi, ok := 0.0, 0.0, false
			if s, found := sums[sumKey{k, diffKey}]; found && s.CILevel > 0 {
				lo, hi, ok = s.CILow, s.CIHigh, true
				med = s.Median
			} else if len(a.diffs) == 1 {
				lo, hi, ok = a.diffs[0]-a.diffCIs[0], a.diffs[0]+a.diffCIs[0], true
			} else if l, h, m := stats.Interval(a.diffs, 0.95); m != stats.MethodNone {
				lo, hi, ok = l, h, true // a file without summaries: as Summarize would
			}
			d = fmt.Sprintf("%+.0f", med)
			if ok {
				d += fmt.Sprintf(" [%+.0f, %+.0f]", lo, hi)
				if lo <= 0 && hi >= 0 {
					d = "?" + d
				}
			} else {
				d = "?" + d // no interval: nothing shown
			}
		}
		errs := ""
		if a.errors > 0 {
			errs = fmt.Sprintf(" (%d failed)", a.errors)
		}
		cd := "-"
		if len(a.cdiffs) > 0 {
			cd = connectDiff(a.cdiffs)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d%s\t%.0f (±%.0f)\t%s\t%.0f\t%s\t%.0f\n", k.Network, k.Placement, a.requests, errs,
			stats.Median(a.means), stats.Median(a.ses), d, stats.Median(a.connects), cd, stats.Median(a.p99s)/1000)
	}
	tw.Flush()
	fmt.Fprintln(w, "blocking: nginx's $upstream_header_time (connect, request, the backend's first byte); connect: $upstream_connect_time (vs baseline: the median of the rounds' differences, with its 95% interval over rounds).")
	fmt.Fprintln(w, "nginx logs whole milliseconds: the mean over many requests is the estimate (±SE), percentiles are whole ms.")
	if rounds > 1 {
		fmt.Fprintf(w, "vs baseline: the mean minus the baseline's in the same placement, paired by round: median of %d rounds, 95%% interval over rounds; ?: it spans 0, no difference shown either way\n", rounds)
	} else {
		fmt.Fprintln(w, "vs baseline: the mean minus the baseline's in the same placement, 95% interval from the round's requests; ?: it spans 0, no difference shown either way")
	}
	fmt.Fprintln(w, "no mark: differs (the interval clear of 0); ? undecided (it spans 0, or one round gave no interval); a difference in us has no minimum effect, so no equivalence is shown.")
	if maxSat > 0 {
		fmt.Fprintf(w, "warning: the client was saturated in %d of %d rounds (%.0f/s asked, %.0f/s sent in the last; requests went out late or waited for a free connection): the times include the queueing of a machine too busy for the load; lower --rate or stop other work\n",
			maxSat, rounds, asked, clientRate)
	}
}

// connectDiff is the connect time's difference to the baseline over the
// rounds: their median, its 95 % interval over rounds, and "?" when the
// interval spans 0 or there is none (one round).
func connectDiff(diffs []float64) string {
	d := fmt.Sprintf("%+.0f", stats.Median(diffs))
	lo, hi, method := stats.Interval(diffs, 0.95)
	if method == stats.MethodNone {
		return "?" + d
	}
	d += fmt.Sprintf(" [%+.0f, %+.0f]", lo, hi)
	if lo <= 0 && hi >= 0 {
		d = "?" + d
	}
	return d
}
