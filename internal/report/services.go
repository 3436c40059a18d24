package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// svcMeasure is one column group of the services table: a workload, and
// how its results used connections (short or long, as it declares).
type svcMeasure struct {
	workload string
	conn     workload.Connections
}

func (m svcMeasure) title() string {
	if m.conn.Style != "" {
		return m.conn.Style + " " + m.workload + "/s"
	}
	return m.workload + "/s"
}

// connectionsOf asks workload wl how the result with params used
// connections (nothing when it does not say).
func connectionsOf(wl string, params map[string]any) workload.Connections {
	w, err := workload.Get(wl)
	if err != nil {
		return workload.Connections{}
	}
	cu, ok := w.(workload.ConnectionUser)
	if !ok {
		return workload.Connections{}
	}
	text := map[string]string{}
	for k, v := range params {
		if s, ok := v.(string); ok {
			text[k] = s
		}
	}
	return cu.Connections(text)
}

// shortName is a workload's name after its protocol: "crr" of "tcp_crr".
func shortName(wl string) string {
	if i := strings.LastIndexByte(wl, '_'); i >= 0 {
		return wl[i+1:]
	}
	return wl
}

type svcRow struct {
	network, placement, lb string
	services               int
}

// Services writes the ClusterIP study's table (seed 003) when the run has
// service results: per network (and placement, when the run has several),
// load balancer and number of services, the time it took to program them,
// the rate of each workload (medians over rounds) with its paired ratio to
// iptables and to ipvs (same network, placement and service count; the
// pod-IP reference against the smallest count), with its interval and its
// verdict's mark as in the main table, and tcp_crr's median transaction
// time for the workloads that declare it dominated by the connect
// (tcp_crr).
func Services(w io.Writer, run *result.Run) {
	var rows []svcRow
	seenRow := map[svcRow]bool{}
	var measures []svcMeasure
	seenM := map[svcMeasure]bool{}
	rate := map[svcRow]map[svcMeasure][]float64{}
	cellOf := map[svcRow]map[svcMeasure]result.CellKey{}
	crrP50 := map[svcRow][]float64{}
	syncS := map[svcRow][]float64{}
	var netOrder, lbOrder, placements []string
	hasIPVS := false
	for _, r := range run.Results {
		if r.LB == "" || r.Error != "" || r.Metrics.TransactionsPerS == nil {
			continue
		}
		k := svcRow{r.Network, r.Placement, r.LB, r.Services}
		if !seenRow[k] {
			seenRow[k] = true
			rows = append(rows, k)
			rate[k] = map[svcMeasure][]float64{}
			cellOf[k] = map[svcMeasure]result.CellKey{}
			if !contains(placements, r.Placement) {
				placements = append(placements, r.Placement)
			}
			if !contains(netOrder, r.Network) {
				netOrder = append(netOrder, r.Network)
			}
			if !contains(lbOrder, r.LB) {
				lbOrder = append(lbOrder, r.LB)
			}
		}
		hasIPVS = hasIPVS || r.LB == result.StudyLBs[1]
		m := svcMeasure{r.Workload, connectionsOf(r.Workload, r.Params)}
		if !seenM[m] {
			seenM[m] = true
			measures = append(measures, m)
		}
		rate[k][m] = append(rate[k][m], *r.Metrics.TransactionsPerS)
		if _, ok := cellOf[k][m]; !ok {
			cellOf[k][m] = r.Key()
		}
		if m.conn.ConnectBound {
			if v, ok := r.Metrics.LatencyUs["p50"]; ok {
				crrP50[k] = append(crrP50[k], v)
			}
		}
		if v, ok := r.Metrics.Extra[result.ExtraSyncS]; ok {
			syncS[k] = append(syncS[k], v)
		}
	}
	if len(rows) == 0 {
		return
	}
	idx := func(list []string, s string) int {
		for i, x := range list {
			if x == s {
				return i
			}
		}
		return len(list)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.network != b.network {
			return idx(netOrder, a.network) < idx(netOrder, b.network)
		}
		if a.placement != b.placement {
			return placementOrder(a.placement) < placementOrder(b.placement)
		}
		if a.lb != b.lb {
			return idx(lbOrder, a.lb) < idx(lbOrder, b.lb)
		}
		return a.services < b.services
	})
	refs := result.StudyLBs[:1]
	if hasIPVS {
		refs = result.StudyLBs
	}
	// the reference row of lb at the same network and count (smallest
	// count for the pod-IP row, which has none)
	refRow := func(k svcRow, lb string) (svcRow, bool) {
		if k.services > 0 {
			r := svcRow{k.network, k.placement, lb, k.services}
			return r, seenRow[r]
		}
		best, ok := svcRow{}, false
		for _, r := range rows {
			if r.network == k.network && r.placement == k.placement && r.lb == lb && (!ok || r.services < best.services) {
				best, ok = r, true
			}
		}
		return best, ok
	}
	fmt.Fprintf(w, "\n== ClusterIP services (seed 003): rate through the service, paired ratio vs %s ==\n", strings.Join(refs, " and vs "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"network", "lb", "services", "sync s"}
	for _, m := range measures {
		head = append(head, m.title())
		for _, ref := range refs {
			head = append(head, "vs "+ref)
		}
		if m.conn.ConnectBound {
			head = append(head, shortName(m.workload)+" p50 us")
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, k := range rows {
		lb, n := k.lb, fmt.Sprint(k.services)
		if k.lb == result.ReferenceLB {
			lb, n = "none (pod IP)", "-"
		}
		net := k.network
		if len(placements) > 1 {
			net += " " + k.placement
		}
		row := []string{net, lb, n, "-"}
		if v, ok := med(syncS[k]); ok {
			row[3] = fmt.Sprintf("%.3f", v)
		}
		for _, m := range measures {
			v, ok := med(rate[k][m])
			if !ok {
				row = append(row, "-")
			} else {
				row = append(row, count(v))
			}
			for _, ref := range refs {
				cell := "-"
				if rr, found := refRow(k, ref); ok && found && rr != k {
					if ck, ok := cellOf[rr][m]; ok {
						if c, ok := stats.CompareCells(run.Results, cellOf[k][m], ck, result.FigTransactions, stats.Default); ok {
							cell = ratio(c)
						}
					}
				}
				row = append(row, cell)
			}
			if m.conn.ConnectBound {
				if p, ok := med(crrP50[k]); ok {
					row = append(row, usec(p))
				} else {
					row = append(row, "-")
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w, "short = a new connection per request, long = one kept-alive connection; sync s = time to program that many services on every node;")
	fmt.Fprintln(w, "figures are medians over rounds. vs LB: the paired ratio to that load balancer's row (the geometric mean of the per-round")
	fmt.Fprintln(w, "ratios, not the quotient of the two rates shown), its 95% interval, and its verdict's mark: no mark = differs")
	fmt.Fprintln(w, "(p<0.05 and the interval clear of [0.95, 1.05]), = equivalent (the whole interval inside it), ? undecided (neither shown; always so with one round).")
}

// med is the median of vs; ok is false when there are none.
func med(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	return median(vs), true
}

func avg(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs)), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
