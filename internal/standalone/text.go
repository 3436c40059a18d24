package standalone

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/hist"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/workload/load"
)

// What `cnperf load` prints: a step's figures as it ends and the
// max-rate summary. They live beside the command, not in report: report
// reads results and links no load engine.

// LoadStep writes what `cnperf load` prints after each step of a load
// workload: the rate achieved, the latency spectrum (from the intended send
// time for an open loop, with the uncorrected latency and the send lag),
// the client's CPU (cpuSeconds, its user+system in the step) and the verdict.
func LoadStep(out io.Writer, r result.Result, cpuSeconds float64) {
	m := r.Metrics
	x := m.Extra
	_, open := x[result.ExtraTargetRPS]
	if open {
		fmt.Fprintf(out, "  achieved %.0f/s of %.0f/s: %.0f of %.0f answered, %.0f unsent, %.0f unanswered",
			x[result.ExtraAchievedRPS], x[result.ExtraTargetRPS], float64(*m.Transactions), x[result.ExtraScheduled], x[result.ExtraUnsent], x[result.ExtraTimeouts])
	} else {
		fmt.Fprintf(out, "  %.0f requests/s: %d answered, %.0f connections opened", *m.TransactionsPerS, *m.Transactions, x[result.ExtraConnects])
	}
	errs := int64(0)
	if m.Errors != nil {
		errs = *m.Errors
	}
	fmt.Fprintf(out, ", %d errors\n", errs)
	title := "latency"
	if open {
		title = "latency from intended send"
	}
	var cells []string
	star := false
	for _, q := range hist.TailPercentiles {
		c := fmt.Sprintf("%s %.1f", q.Key, m.LatencyUs[q.Key])
		if x[result.ExtraInsignificant(q.Key)] == 1 {
			c += "*"
			star = true
		}
		cells = append(cells, c)
	}
	cells = append(cells, fmt.Sprintf("max %.1f", m.LatencyUs["max"]))
	fmt.Fprintf(out, "  %s (us): %s\n", title, strings.Join(cells, "  "))
	if open {
		q := result.ExtraQuantileUs
		fmt.Fprintf(out, "  uncorrected (us): p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
			x[q("uncorrected", "p50")], x[q("uncorrected", "p99")], x[q("uncorrected", "p99.9")], x[q("uncorrected", "max")])
		fmt.Fprintf(out, "  send lag (us):    p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
			x[q("send_lag", "p50")], x[q("send_lag", "p99")], x[q("send_lag", "p99.9")], x[q("send_lag", "max")])
		if b, ok := x[result.ExtraConnsBusy]; ok {
			fmt.Fprintf(out, "  every connection busy while a request was due: %.2f%% of the window\n", b)
		}
	}
	if star {
		fmt.Fprintf(out, "  * not significant: %.0f samples are too few for that percentile\n", x[result.ExtraSamples])
	}
	if secs, _ := r.Params[result.ParamDuration].(float64); cpuSeconds > 0 && *m.Transactions > 0 {
		fmt.Fprintf(out, "  client CPU: %.2f s/s, %.2f us per request\n", cpuSeconds/secs, cpuSeconds/float64(*m.Transactions)*1e6)
	}
	if open {
		s, _ := r.Params[result.ParamMaxSendLag].(string)
		lag, _ := time.ParseDuration(s)
		if lag == 0 {
			lag = time.Millisecond
		}
		if v := load.Verdict(m, lag); v != "" {
			fmt.Fprintf(out, "  verdict: %s (not a valid latency)\n", strings.ToUpper(v[:1])+v[1:])
		} else {
			fmt.Fprintf(out, "  verdict: rate held\n")
		}
	}
}

// MaxRates sums up the --max-rate-search steps among results: the highest
// rate held per response size (and per network, placement, load balancer
// and workload when the results have several).
func MaxRates(out io.Writer, results []result.Result) {
	type group struct {
		cell result.CellKey
		size string
	}
	var groups []group
	maxBy := map[group]string{}
	cells := map[result.CellKey]bool{}
	for _, r := range results {
		str := func(k string) string { s, _ := r.Params[k].(string); return s }
		if str(result.ParamPhase) == "" {
			continue
		}
		cell := r.Key()
		cell.Step = ""
		cells[cell] = true
		g := group{cell, str(result.ParamResponseSize)}
		if _, ok := maxBy[g]; !ok {
			groups = append(groups, g)
			maxBy[g] = ""
		}
		if v := str(result.ParamMaxRate); v != "" {
			maxBy[g] = v
		}
	}
	for _, g := range groups {
		what := "max rate"
		if len(cells) > 1 {
			// "" and "-" say nothing
			words := slices.DeleteFunc([]string{g.cell.Network, g.cell.Placement, lbName(g.cell.LB), g.cell.Workload},
				func(w string) bool { return w == "" || w == "-" })
			what += " " + strings.Join(words, " ")
		}
		if maxBy[g] == "" {
			fmt.Fprintf(out, "%s (size %s): none held; every search step was saturated or over the latency bound\n", what, g.size)
		} else {
			fmt.Fprintf(out, "%s (size %s): %s/s held (not saturated, p99 within the latency bound)\n", what, g.size, maxBy[g])
		}
	}
}

func lbName(lb string) string {
	if lb == "" {
		return ""
	}
	return "lb=" + lb
}
