// Package recommend ranks the networks (and load balancers) of a run for a
// workload profile, with the reasons drawn from the measured figures and
// their intervals. The rules live in one table (Rules), each naming the
// figure it reads; nothing here names a network or a workload: cells are
// chosen by how their workload uses connections and by the figures it
// declares.
package recommend

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cnperf/cnperf/internal/registry"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
	"github.com/cnperf/cnperf/internal/workload"
)

// Cells says which cells a rule reads.
type Cells string

// The cell selections.
const (
	// LongConns: no load balancer, a workload that keeps its connection
	// (or does not say), so its figures are the network's per-packet cost.
	LongConns Cells = "long-connection cells"
	// ShortConns: no load balancer, a workload that opens a connection per
	// transaction (workload.Connections Style "short").
	ShortConns Cells = "short-connection cells"
	// AnyNet: every cell without a load balancer.
	AnyNet Cells = "cells without a service"
	// Services: cells through a ClusterIP service at the largest number
	// of services the run programmed.
	Services Cells = "service cells at the most services"
)

// Rule is one line of the table: for Profile, the figure Metric of the
// Cells, weighing Weight in the profile's score.
type Rule struct {
	Profile string
	Metric  string // a result.Metrics key, e.g. "latency_us.p99"
	Cells   Cells
	Weight  float64
	Why     string
	// Better is the figure's direction when no workload declares Metric
	// as a headline figure (the services' sync time).
	Better result.Better
}

// Rules is the whole table. A profile's score for a candidate is the
// weighted geometric mean of its rules' relative values (1 = the best
// candidate on that figure, direction from the figure's declaration).
var Rules = []Rule{
	{"latency", "latency_us.p99", LongConns, 1, "tail of a request/response round trip", ""},
	{"latency", "latency_us.p50", LongConns, 1, "typical round trip", ""},
	{"latency", result.KeyTransactions, LongConns, 1, "round trips per second on one connection", ""},
	{"latency", "cpu.cell_us_per_trans", LongConns, 0.5, "CPU per round trip", ""},
	{"throughput", result.KeyThroughput, AnyNet, 1, "bulk transfer rate", ""},
	{"throughput", "cpu.cell_ns_per_byte", AnyNet, 0.5, "CPU per byte moved", ""},
	{"short-connections", result.KeyTransactions, ShortConns, 1, "connections set up and used per second", ""},
	{"short-connections", "latency_us.p99", ShortConns, 0.5, "tail of a connect + round trip", ""},
	{"many-services", result.KeyTransactions, Services, 1, "rate through a service with many programmed", ""},
	{"many-services", "latency_us.p99", Services, 0.5, "tail latency through a service with many programmed", ""},
	{"many-services", result.ExtraKey(result.ExtraSyncS), Services, 0.5, "time to program the services on every node", result.LowerBetter},
	{"mixed", "latency_us.p99", LongConns, 1, "tail of a request/response round trip", ""},
	{"mixed", result.KeyTransactions, LongConns, 1, "round trips per second", ""},
	{"mixed", result.KeyThroughput, AnyNet, 1, "bulk transfer rate", ""},
	{"mixed", result.KeyTransactions, ShortConns, 1, "connections per second", ""},
	{"mixed", "cpu.cell_us_per_trans", LongConns, 0.5, "CPU per round trip", ""},
	{"mixed", "cpu.cell_ns_per_byte", AnyNet, 0.5, "CPU per byte", ""},
}

// Profiles lists the profiles the table knows, in table order.
func Profiles() []string {
	var ps []string
	for _, r := range Rules {
		if !slices.Contains(ps, r.Profile) {
			ps = append(ps, r.Profile)
		}
	}
	return ps
}

// Candidate is what is ranked: a network in a placement, with its load
// balancer for the services profile.
type Candidate struct {
	Network   string
	Placement string
	LB        string
}

func (c Candidate) String() string {
	s := c.Network
	if c.LB != "" {
		s += " lb=" + c.LB
	}
	return s
}

// Reading is one rule's figure for one candidate.
type Reading struct {
	Rule     Rule
	Figure   result.Figure
	Cell     result.CellKey // the cell read
	Workload string
	Step     string // the cell's step, without its services count
	Median   float64
	Lo, Hi   float64 // interval of the median; HasCI false when none
	HasCI    bool
	Rel      float64 // relative to the best candidate, 1 = best
	RelLo    float64
	RelHi    float64
	Vs       *result.Comparison // ratio to the baseline (or pod IP) when the run has it
}

// Ranked is one candidate's place. A candidate is placed above another
// only when some figure the profile weighs separates them in its favour
// (the two cells compared, paired by round: the verdict differs) and none
// in the other's. Places form a true order: every candidate of a place
// is separated above every candidate of each later place. The layers
// (the first holds every candidate nothing is above, the next every
// candidate only those are above...) are merged where a chain would order
// an unseparated pair (A above B, B above C, A and C not separated: one
// place, where B is behind A, C behind B, and A and C tied).
type Ranked struct {
	Candidate Candidate
	Place     int // 1 = first
	Score     float64
	Readings  []Reading
	// Within its place: TiedWith, the candidates no figure separates it
	// from; TradeOffs, those separated both ways (which figure favours whom).
	TiedWith  []Candidate
	TradeOffs []Separation
	// Behind are the candidates above it, and why: those of earlier
	// places, and within its place those a chain keeps beside it.
	Behind []Separation
	Notes  []string // constraints' remarks that did not remove it
}

// Separation is how two candidates compare: the figures that favour each.
type Separation struct {
	Other Candidate
	// For and Against name the figures, with their paired ratios, that
	// favour this candidate and the other.
	For, Against []string
}

// Removed is a candidate a constraint took out, and why.
type Removed struct {
	Candidate Candidate
	Reason    string
}

// Result is a profile's ranking in one placement.
type Result struct {
	Profile   string
	Placement string
	Ranked    []Ranked
	Removed   []Removed
	// Undecided says why the data cannot rank (no figure the profile reads,
	// or one candidate only); Ranked is then empty.
	Undecided string
	// Chains say, for a place that holds separated candidates (A above B,
	// B above C), which unseparated pairs (A and C) keep them in one place.
	Chains []string
	// Family is the comparisons between candidates the places rest on and
	// what the correction for their number did.
	Family stats.Family
	// NoIntervals: the run had one round, so no difference is tested.
	NoIntervals bool
	// Skipped are what the run asked for but could not measure here, with
	// why: candidates that are missing, not ranked last.
	Skipped []string
}

// cell is one summary the rules can read.
type cell struct {
	key result.CellKey
	sum result.Summary
}

func selects(c Cells, k result.CellKey, conn workload.Connections) bool {
	short := conn.Style == "short" || conn.ConnectBound
	switch c {
	case LongConns:
		return k.LB == "" && !short
	case ShortConns:
		return k.LB == "" && short
	case AnyNet:
		return k.LB == ""
	case Services:
		return k.LB != "" && k.Services > 0
	}
	return false
}

// Rank ranks the candidates of run for profile, after the constraints.
// It returns one Result per placement the run measured.
func Rank(run *result.Run, profile string, cons []Constraint) ([]Result, error) {
	var rules []Rule
	for _, r := range Rules {
		if r.Profile == profile {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("unknown profile %q;%s use one of %s", profile, registry.Suggest(profile, Profiles()), strings.Join(Profiles(), ", "))
	}
	// summaries of every figure the rules read, from the results (a file's
	// own summaries cover only the declared figures)
	cp := *run
	stats.Summarize(&cp, func(wl string) []result.Figure { return figuresFor(wl, rules) })
	sums := cp.Summaries
	params := map[result.CellKey]map[string]any{}
	for _, r := range run.Results {
		if _, ok := params[r.Key()]; !ok {
			params[r.Key()] = r.Params
		}
	}
	maxSvc := map[string]int{} // per workload
	for _, s := range sums {
		if s.Cell.Services > maxSvc[s.Cell.Workload] {
			maxSvc[s.Cell.Workload] = s.Cell.Services
		}
	}
	var placements []string
	for _, r := range run.Results {
		if !slices.Contains(placements, r.Placement) {
			placements = append(placements, r.Placement)
		}
	}
	var skipped []string
	for _, k := range run.Skipped {
		what := k.Network
		if k.Workload != "" {
			what += " " + k.Workload
		}
		if k.Placement != "" {
			what += " " + k.Placement
		}
		if s := what + ": " + k.Reason; !slices.Contains(skipped, s) {
			skipped = append(skipped, s)
		}
	}
	var out []Result
	for _, pl := range placements {
		r := rankPlacement(run, profile, pl, rules, sums, params, maxSvc, cons)
		r.Skipped = skipped
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, Result{Profile: profile, Undecided: "the run has no results"})
	}
	return out, nil
}

func rankPlacement(run *result.Run, profile, pl string, rules []Rule, sums []result.Summary, params map[result.CellKey]map[string]any, maxSvc map[string]int, cons []Constraint) Result {
	res := Result{Profile: profile, Placement: pl}
	readings := map[Candidate][]Reading{}
	var cands, seen []Candidate
	anyCI := false
	for _, rule := range rules {
		// per workload (and step): the candidates' values, made relative
		// to the best candidate of that group
		type grp struct{ wl, step string }
		groups := map[grp][]Reading{}
		gcands := map[grp][]Candidate{}
		var gorder []grp
		for _, s := range sums {
			k := s.Cell
			if k.Placement != pl || s.Figure != rule.Metric || s.N == 0 || reference(k) {
				continue
			}
			if rule.Better != "" && len(gorder) > 0 && gorder[0].wl != k.Workload {
				continue // a figure of the cell, not of its workload: read once
			}
			if rule.Cells == Services && k.Services != maxSvc[k.Workload] {
				continue
			}
			if !selects(rule.Cells, k, workload.ConnectionsOf(k.Workload, params[k])) {
				continue
			}
			f, ok := figure(k.Workload, rule.Metric, rules)
			if !ok {
				continue
			}
			c := Candidate{Network: k.Network, Placement: k.Placement}
			if rule.Cells == Services {
				c.LB = k.LB
			}
			g := grp{k.Workload, stepWithoutServices(k.Step)}
			if _, ok := groups[g]; !ok {
				gorder = append(gorder, g)
			}
			r := Reading{Rule: rule, Figure: f, Cell: k, Workload: k.Workload, Step: g.step, Median: s.Median, Vs: s.VsBaseline}
			if s.CILevel > 0 {
				r.Lo, r.Hi, r.HasCI = s.CILow, s.CIHigh, true
				anyCI = true
			}
			groups[g] = append(groups[g], r)
			gcands[g] = append(gcands[g], c)
		}
		for _, g := range gorder {
			rs := groups[g]
			for _, c := range gcands[g] {
				if !slices.Contains(seen, c) {
					seen = append(seen, c)
				}
			}
			if len(rs) < 2 {
				continue // nothing to compare
			}
			relative(rs)
			for i, c := range gcands[g] {
				if _, ok := readings[c]; !ok {
					cands = append(cands, c)
				}
				readings[c] = append(readings[c], rs[i])
			}
		}
	}
	res.NoIntervals = !anyCI
	if len(cands) < 2 {
		res.Undecided = undecided(profile, rules, seen)
		return res
	}
	var ranked []Ranked
	for _, c := range cands {
		notes, why := applyConstraints(run, c, cons)
		if why != "" {
			res.Removed = append(res.Removed, Removed{c, why})
			continue
		}
		ranked = append(ranked, Ranked{Candidate: c, Score: score(readings[c]), Readings: readings[c], Notes: notes})
	}
	res.Chains, res.Family = place(run.Results, ranked)
	res.Ranked = ranked
	if len(ranked) == 0 {
		res.Undecided = "every candidate was removed by the constraints"
	}
	return res
}

func reference(k result.CellKey) bool {
	_, ok := stats.Reference(k)
	return !ok
}

func stepWithoutServices(step string) string {
	var out []string
	for _, f := range strings.Fields(step) {
		if !strings.HasPrefix(f, "services=") {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// relative sets each reading's value relative to the best of the group:
// 1 for the best, below 1 for the others, whichever way the figure is
// better; the interval likewise.
func relative(rs []Reading) {
	higher := rs[0].Figure.Better != result.LowerBetter
	best := rs[0].Median
	for _, r := range rs {
		if (higher && r.Median > best) || (!higher && r.Median < best) {
			best = r.Median
		}
	}
	rel := func(v float64) float64 {
		switch {
		case best == 0 && v == 0:
			return 1
		case higher:
			return v / best
		case v <= 0:
			return 1
		}
		return best / v
	}
	for i := range rs {
		r := &rs[i]
		r.Rel = rel(r.Median)
		r.RelLo, r.RelHi = r.Rel, r.Rel
		if r.HasCI {
			a, b := rel(r.Lo), rel(r.Hi)
			r.RelLo, r.RelHi = math.Min(a, b), math.Max(a, b)
		}
	}
}

// score is the weighted geometric mean over the rules of the relative
// values, each rule's readings (one per workload it matched) averaged
// first, so a rule weighs its weight however many workloads it read.
func score(rs []Reading) float64 {
	type acc struct {
		sum float64
		n   int
	}
	per := map[Rule]*acc{}
	var rules []Rule
	for _, r := range rs {
		if r.Rel <= 0 {
			continue
		}
		if per[r.Rule] == nil {
			per[r.Rule] = &acc{}
			rules = append(rules, r.Rule)
		}
		per[r.Rule].sum += math.Log(r.Rel)
		per[r.Rule].n++
	}
	var sum, w float64
	for _, r := range rules {
		sum += r.Weight * per[r].sum / float64(per[r].n)
		w += r.Weight
	}
	if w == 0 {
		return 0
	}
	return math.Exp(sum / w)
}

// pairCmp is one figure's comparison of two candidates' cells (a against
// b), with what it says for each side when it separates them.
type pairCmp struct {
	c        result.Comparison
	ab, ba   string // the figure with a's ratio to b, and b's to a
	aBetter  bool
	hasSides bool // the figure has a direction
}

// compareAll compares a with b on every figure both were read on (same
// rule, workload and step): their cells paired by round. One measured
// once and copied into every round (no spread on either side, e.g. the
// services' sync time) is one sample, which separates nothing, and is
// not compared.
func compareAll(cm *stats.Comparer, a, b []Reading, ca, cb Candidate) []pairCmp {
	type rkey struct {
		rule           Rule
		workload, step string
	}
	bs := make(map[rkey][]Reading, len(b))
	for _, y := range b {
		k := rkey{y.Rule, y.Workload, y.Step}
		bs[k] = append(bs[k], y)
	}
	var out []pairCmp
	for _, x := range a {
		for _, y := range bs[rkey{x.Rule, x.Workload, x.Step}] {
			if constant(x) && constant(y) {
				continue
			}
			c, ok := cm.Compare(x.Cell, y.Cell, x.Figure, stats.Default)
			if !ok {
				continue
			}
			p := pairCmp{c: c,
				ab:       fmt.Sprintf("%s %s %.2fx %s's [%.2f, %.2f]", x.Workload, x.Figure.Label, c.Ratio, cb, c.CILow, c.CIHigh),
				aBetter:  c.Direction == stats.Better,
				hasSides: c.Direction == stats.Better || c.Direction == stats.Worse}
			if c.Ratio > 0 && c.CILow > 0 {
				p.ba = fmt.Sprintf("%s %s %.2fx %s's [%.2f, %.2f]", x.Workload, x.Figure.Label, 1/c.Ratio, ca, 1/c.CIHigh, 1/c.CILow)
			}
			out = append(out, p)
		}
	}
	return out
}

// Uncorrected, set by `cnperf recommend --uncorrected`, separates two
// candidates by any figure that differs at 5 % alone, not corrected for
// the family of comparisons.
var Uncorrected bool

// constant says a reading had the same value in every round (its
// interval, from logs, is then that value to the last bits).
func constant(r Reading) bool { return r.HasCI && r.Hi-r.Lo <= 1e-9*math.Abs(r.Median) }

// place sets each candidate's place, its ties and trade-offs within it and
// what puts it behind, and sorts them: by place, then score, then name.
func place(rs []result.Result, ranked []Ranked) (chains []string, fam stats.Family) {
	n := len(ranked)
	cm := stats.NewComparer(rs)
	sep := make([][]Separation, n)
	above := make([][]bool, n) // above[i][j]: i is placed above j
	for i := range ranked {
		sep[i] = make([]Separation, n)
		above[i] = make([]bool, n)
		for j := range ranked {
			sep[i][j].Other = ranked[j].Candidate
		}
	}
	// every pair on every figure both were read on: one family, corrected
	// together (stats.CorrectFamily), so that the chance of any false
	// separation stays at alpha however many candidates and figures
	type pairKey struct{ i, j int }
	cmps := map[pairKey][]pairCmp{}
	var all []*result.Comparison
	for i := range ranked {
		for j := i + 1; j < n; j++ {
			ps := compareAll(cm, ranked[i].Readings, ranked[j].Readings, ranked[i].Candidate, ranked[j].Candidate)
			cmps[pairKey{i, j}] = ps
		}
	}
	for i := range ranked {
		for j := i + 1; j < n; j++ {
			ps := cmps[pairKey{i, j}]
			for k := range ps {
				all = append(all, &ps[k].c)
			}
		}
	}
	if Uncorrected {
		copies := make([]*result.Comparison, len(all))
		for k, c := range all {
			x := *c
			copies[k] = &x
		}
		f := stats.CorrectFamily(copies, stats.Default.Alpha)
		fam = stats.Family{Method: "none", Alpha: f.Alpha, Size: f.Size, Before: f.Before, After: f.Before}
	} else {
		fam = stats.CorrectFamily(all, stats.Default.Alpha)
	}
	for i := range ranked {
		for j := i + 1; j < n; j++ {
			for _, p := range cmps[pairKey{i, j}] {
				if stats.VerdictOf(p.c) != stats.Differs || !p.hasSides {
					continue
				}
				if p.aBetter {
					sep[i][j].For = append(sep[i][j].For, p.ab)
					sep[j][i].Against = append(sep[j][i].Against, p.ba)
				} else {
					sep[i][j].Against = append(sep[i][j].Against, p.ab)
					sep[j][i].For = append(sep[j][i].For, p.ba)
				}
			}
		}
	}
	for i := range ranked {
		for j := range ranked {
			if i != j {
				above[i][j] = len(sep[i][j].For) > 0 && len(sep[i][j].Against) == 0
			}
		}
	}
	// layers: the first holds every candidate nothing is above, the next
	// every candidate only those are above, and so on
	layer := make([]int, n)
	placed := make([]bool, n)
	for p, left := 1, n; left > 0; p++ {
		var group []int
		for j := range ranked {
			if placed[j] {
				continue
			}
			top := true
			for i := range ranked {
				if !placed[i] && above[i][j] {
					top = false
				}
			}
			if top {
				group = append(group, j)
			}
		}
		if len(group) == 0 { // a cycle of separations: the rest share a place
			for j := range ranked {
				if !placed[j] {
					group = append(group, j)
				}
			}
		}
		for _, j := range group {
			layer[j] = p
			placed[j] = true
			left--
		}
	}
	// places: layers merged wherever two candidates of different layers
	// are not separated (A above B, B above C, A and C not), so that a
	// place is above another only where every pair across them is
	// separated: a true order, not a chain
	merge := make([]int, n+2) // merge[l]: the last layer merged with layer l
	for l := range merge {
		merge[l] = l
	}
	for i := range ranked {
		for j := range ranked {
			if layer[i] < layer[j] && !above[i][j] {
				merge[layer[i]] = max(merge[layer[i]], layer[j])
			}
		}
	}
	placeOf := make([]int, n+2)
	for l, p, end := 1, 0, 0; l <= n; l++ {
		if l > end {
			p++
		}
		end = max(end, merge[l])
		placeOf[l] = p
	}
	for j := range ranked {
		ranked[j].Place = placeOf[layer[j]]
	}
	// say, per place that merged layers, which separated pairs it holds
	// and which unseparated pairs kept them in it
	for p := 1; p <= n; p++ {
		var links, loose []string
		for i := range ranked {
			for j := range ranked {
				if ranked[i].Place != p || ranked[j].Place != p {
					continue
				}
				if above[i][j] {
					links = append(links, fmt.Sprintf("%s above %s", ranked[i].Candidate, ranked[j].Candidate))
				}
				if layer[i] < layer[j] && !above[i][j] && !above[j][i] {
					loose = append(loose, fmt.Sprintf("%s and %s", ranked[i].Candidate, ranked[j].Candidate))
				}
			}
		}
		if len(links) > 0 && len(loose) > 0 {
			slices.Sort(links)
			slices.Sort(loose)
			chains = append(chains, fmt.Sprintf("place %d holds separated candidates (%s) because %s are not separated: a later place would order them",
				p, strings.Join(links, ", "), strings.Join(loose, ", ")))
		}
	}
	slices.Sort(chains)
	for j := range ranked {
		for i := range ranked {
			if i == j {
				continue
			}
			switch {
			case ranked[i].Place < ranked[j].Place:
				ranked[j].Behind = append(ranked[j].Behind, sep[j][i])
			case ranked[i].Place > ranked[j].Place:
			case above[i][j]:
				// a chain kept in one place: above it, though it shares the place
				ranked[j].Behind = append(ranked[j].Behind, sep[j][i])
			case above[j][i]:
			case len(sep[j][i].For) == 0 && len(sep[j][i].Against) == 0:
				ranked[j].TiedWith = append(ranked[j].TiedWith, ranked[i].Candidate)
			default:
				ranked[j].TradeOffs = append(ranked[j].TradeOffs, sep[j][i])
			}
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		switch {
		case a.Place != b.Place:
			return a.Place < b.Place
		case a.Score != b.Score:
			return a.Score > b.Score
		}
		return a.Candidate.String() < b.Candidate.String()
	})
	return chains, fam
}

func undecided(profile string, rules []Rule, seen []Candidate) string {
	if len(seen) == 1 {
		return fmt.Sprintf("the run cannot decide %q here: only %s has the figures it reads, nothing to rank it against", profile, seen[0])
	}
	var need []string
	for _, r := range rules {
		need = append(need, fmt.Sprintf("%s of %s", r.Metric, r.Cells))
	}
	what := "no candidate"
	wls := workloadsDeclaring(rules)
	hint := ""
	if len(wls) > 0 {
		hint = "; measure them with e.g. cnperf run --workloads " + strings.Join(wls, ",")
	}
	return fmt.Sprintf("the run cannot decide %q: %s has the figures it reads (%s)%s", profile, what, strings.Join(need, "; "), hint)
}

// workloadsDeclaring lists the registered workloads that declare one of the
// rules' metrics as a headline figure.
func workloadsDeclaring(rules []Rule) []string {
	var out []string
	for _, n := range workload.Names() {
		for _, f := range workload.FiguresOf(n) {
			conn := workload.ConnectionsOf(n, nil)
			if slices.ContainsFunc(rules, func(r Rule) bool {
				return r.Metric == f.Key && r.Cells != Services && selects(r.Cells, result.CellKey{}, conn)
			}) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// figuresFor is what workload wl declares, and the rules' metrics it does
// not declare but the table gives a direction.
func figuresFor(wl string, rules []Rule) []result.Figure {
	fs := slices.Clone(workload.FiguresOf(wl))
	for _, r := range rules {
		if r.Better != "" && !slices.ContainsFunc(fs, func(f result.Figure) bool { return f.Key == r.Metric }) {
			_, label, _ := strings.Cut(r.Metric, ".")
			fs = append(fs, result.Figure{Key: r.Metric, Label: cmp.Or(label, r.Metric), Better: r.Better, Kind: result.KindTime})
		}
	}
	return fs
}

func figure(wl, key string, rules []Rule) (result.Figure, bool) {
	for _, f := range figuresFor(wl, rules) {
		if f.Key == key {
			return f, true
		}
	}
	return result.Figure{}, false
}
