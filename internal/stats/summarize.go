package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// DefaultFigures are the headline figures Summarize uses for a workload
// when no callback declares them: each is summarized where present.
var DefaultFigures = []result.Figure{
	result.FigThroughput, result.FigTransactions, result.FigP99, result.FigCPUPerByte, result.FigCPUPerTrans,
}

// NoisyCV is the spread of the reference cells' rates between rounds above
// which Summarize warns that the machine was noisy. Why 10 %: the paired
// interval's half-width is about t(n-1)·√2·CV/√n when each cell's noise is
// its own, so with CV 10 % and 5 rounds a ratio is only known to ±17 %,
// more than what separates host from bridge or bridge from an overlay's
// routing variant (10-20 %); at 5 % it is ±9 %. A quiet machine shows 1-3 %.
// The warning reads the CV's upper confidence bound (CVUpper), not the
// point: three rounds cannot show a spread below 10 % unless their own CV
// is below about 2.3 %.
const NoisyCV = 0.10

// CVLevel is the confidence of the CV's upper bound the noise warning reads.
const CVLevel = 0.95

// CVUpper is a one-sided upper confidence bound, at level, of the
// coefficient of variation cv measured over n samples: the chi-square
// bound of a normal sample's standard deviation, σ <= s·√((n-1)/χ²(1-level;
// n-1)), applied to the CV with the mean taken as known (close enough for
// a CV well below 1, which is where the warning's threshold sits). n < 2
// gives +Inf: one sample bounds nothing.
func CVUpper(cv float64, n int, level float64) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	df := float64(n - 1)
	return cv * math.Sqrt(df/ChiSquareQuantile(1-level, df))
}

// Prefixes of the warnings Summarize writes; it replaces its own warnings
// (and only those) each time it runs, so calling it after every round of a
// run in progress leaves one current set.
const (
	WarnNoisy  = "noisy machine: "
	WarnFailed = "failed rounds: "
	WarnBusy   = "busy machine: "
)

// BusyCPUs is how much CPU other work may take, beside the cells' own
// agents and daemons, before Summarize warns: a steady load slows every
// round alike, so it does not show as spread between rounds.
const BusyCPUs = 0.3

// Reference is the cell k is compared with: the baseline network in the
// same placement, workload, step (and LB and services, unset there); for a
// service run (LB set) the pod-IP reference, lb "none", of the same network,
// workload, step (whose step has no "services=N") and backend. ok is false
// for a reference cell itself.
func Reference(k result.CellKey) (ref result.CellKey, ok bool) {
	if k.LB != "" {
		if k.LB == result.ReferenceLB {
			return ref, false
		}
		var steps []string
		for _, s := range strings.Fields(k.Step) {
			if !strings.HasPrefix(s, "services=") {
				steps = append(steps, s)
			}
		}
		return result.CellKey{Network: k.Network, Workload: k.Workload, Placement: k.Placement, LB: result.ReferenceLB, Step: strings.Join(steps, " "), Backend: k.Backend}, true
	}
	if k.Network == result.BaselineNetwork {
		return ref, false
	}
	k.Network = result.BaselineNetwork
	return k, true
}

// replica is the lab's cell of the network a cell of another backend ran
// on: the same cell on the lab, or, where the lab ran that network in one
// other placement only (Docker's nat is same-host on one engine, the lab's
// replica cross-host), that one; for a cluster's service cell, the lab's
// replica of its proxy (serviceReplica). ok is false for a lab cell or
// none.
func (c cells) replica(k result.CellKey, proxyLB string) (result.CellKey, bool) {
	if k.Backend == "" {
		return k, false
	}
	r := k
	r.Backend = ""
	if _, ok := c.results[r]; ok {
		return r, true
	}
	var found []result.CellKey
	for _, o := range c.order {
		if o.Backend == "" && o.Network == k.Network && o.Workload == k.Workload && o.LB == k.LB && o.Services == k.Services && o.Step == k.Step {
			found = append(found, o)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	if k.LB != "" {
		return c.serviceReplica(k, proxyLB)
	}
	if k.Network == PodNetwork && c.podReplica != "" {
		// a cluster's pod network against the lab's replica of its CNI
		r.Network = c.podReplica
		if _, ok := c.results[r]; ok {
			return r, true
		}
	}
	return r, false
}

// PodNetwork is the kubernetes backend's name for the cluster's own pod
// network (its CNI).
const PodNetwork = "pod"

// PodReplica is the lab's network that replicates the pod network of the
// run's cluster: the one whose declaration (Environment.Replicas) names
// the system the cluster ran (Kubernetes.Systems); "" where none does.
func PodReplica(env result.Environment) string {
	return env.ReplicaOf(result.ReplicaNetwork, env.System(result.SystemPodNetwork))
}

// serviceReplica is the lab's cell a cluster's service cell is measured
// against: a cell through the cluster's own proxy (lb cluster) against the
// lab's replica of that proxy (lb proxyLB, the kube-proxy mode the run's
// environment names, or the only replica the lab ran), and a cell through
// a pod IP (lb none) against the lab's pod IP; in the same placement,
// workload, service count and step, on whichever network the lab ran it
// (one only: two would be ambiguous).
func (c cells) serviceReplica(k result.CellKey, proxyLB string) (result.CellKey, bool) {
	var found []result.CellKey
	for _, o := range c.order {
		if o.Backend != "" || o.Workload != k.Workload || o.Placement != k.Placement || o.Services != k.Services || o.Step != k.Step {
			continue
		}
		if d := c.declared[result.ReplicaKey(result.ReplicaNetwork, o.Network)]; c.podSystem != "" && d != "" && d != c.podSystem {
			continue // the lab's network replicates another pod network than the cluster's
		}
		switch {
		case k.LB == result.ReferenceLB && o.LB == result.ReferenceLB:
		case k.LB == ClusterLB && o.LB != result.ReferenceLB && o.LB != ClusterLB && (proxyLB == "" || o.LB == proxyLB):
		default:
			continue
		}
		found = append(found, o)
	}
	if len(found) == 1 {
		return found[0], true
	}
	return k, false
}

// ClusterLB is the --lb of a cluster's own service proxy (svc.ClusterProxy).
const ClusterLB = "cluster"

// ProxyLB is the lab load balancer that replicates the service proxy of
// the run's cluster (kube-proxy in a mode, Cilium's socket or tc load
// balancing), from the parts' declarations; "" where none does.
func ProxyLB(env result.Environment) string {
	return env.ReplicaOf(result.ReplicaLB, env.System(result.SystemServiceProxy))
}

// isReference says whether k is what other cells are compared with.
func isReference(k result.CellKey) bool {
	return k.LB == result.ReferenceLB || (k.LB == "" && k.Network == result.BaselineNetwork)
}

// CellName names a cell for people: "vxlan cross-host tcp_rr lb=ipvs step".
func CellName(k result.CellKey) string {
	parts := []string{k.Network, k.Placement, k.Workload}
	if k.Backend != "" {
		parts = append([]string{k.Backend}, parts...)
	}
	if k.LB != "" {
		parts = append(parts, "lb="+k.LB)
	}
	if k.Step != "" {
		parts = append(parts, k.Step)
	}
	return strings.Join(parts, " ")
}

// sample is one figure of one result: its round (0 when the file predates
// rounds), value and the machine's speed around it (zero: not recorded).
type sample struct {
	round int
	v     float64
	speed speedAt
}

func values(ss []sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.v
	}
	return out
}

// cells groups results by cell in order of first appearance, skipping
// errored ones.
type cells struct {
	order   []result.CellKey
	results map[result.CellKey][]result.Result
	// podReplica is the lab network replicating a cluster's pod network (PodReplica).
	podReplica string
	// podSystem is the real pod network the cluster ran, and declared what
	// each of the lab's networks replicates: a lab network that declares
	// another system is no replica of the cluster's pod network.
	podSystem string
	declared  map[string]string
}

func group(rs []result.Result) cells {
	c := cells{results: map[result.CellKey][]result.Result{}}
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		k := r.Key()
		if _, ok := c.results[k]; !ok {
			c.order = append(c.order, k)
		}
		c.results[k] = append(c.results[k], r)
	}
	return c
}

func figuresOf(figures func(string) []result.Figure, workload string) []result.Figure {
	if figures != nil {
		if fs := figures(workload); fs != nil {
			return fs
		}
	}
	return DefaultFigures
}

func (c cells) samples(k result.CellKey, key string) []sample {
	var out []sample
	for _, r := range c.results[k] {
		if v, ok := r.Metrics.Value(key); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, sample{r.Round, v, speedOf(r)})
		}
	}
	return out
}

// summary is one cell's figure over its samples, without a comparison.
func summary(k result.CellKey, key string, xs []float64, o Options) result.Summary {
	s := result.Summary{Cell: k, Figure: key, N: len(xs), Median: Median(xs), CV: CV(xs), CIMethod: MethodNone}
	s.CILow, s.CIHigh, s.CIMethod = Interval(xs, o.Level)
	if s.CIMethod != MethodNone {
		s.CILevel = o.Level
	}
	return s
}

// byRound pairs a's and b's samples by round, over the rounds both have
// (the median where a round has several). ok is false when either side
// has samples without a round (a file from before rounds): those cannot
// be paired.
func byRound(a, b []sample) (x, y []float64, ok bool) {
	ra, rb := map[int][]float64{}, map[int][]float64{}
	for _, s := range a {
		if s.round <= 0 {
			return nil, nil, false
		}
		ra[s.round] = append(ra[s.round], s.v)
	}
	for _, s := range b {
		if s.round <= 0 {
			return nil, nil, false
		}
		rb[s.round] = append(rb[s.round], s.v)
	}
	var rounds []int
	for r := range ra {
		if _, ok := rb[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	for _, r := range rounds {
		x = append(x, Median(ra[r]))
		y = append(y, Median(rb[r]))
	}
	return x, y, true
}

// compareCells compares cell a's samples with reference b's: paired by
// the machine's speed where both recorded it (pairBySpeed), by round when
// both have rounds, otherwise as independent samples (Welch).
func compareCells(a, b []sample, better result.Better, o Options, sl slope) (result.Comparison, bool) {
	if x, y, sp, ok := pairBySpeed(a, b, sl); ok {
		c, ok := Paired(x, y, better, o)
		unmatched(&c, &sp)
		c.Speed = &sp
		return c, ok
	}
	if x, y, ok := byRound(a, b); ok {
		return Paired(x, y, better, o)
	}
	return Unpaired(values(a), values(b), better, o)
}

// Summarize fills run.Summaries: for every cell (results with an error are
// skipped) and every figure the workload declares (figures may be nil, or
// return nil, for DefaultFigures), the median over rounds with its
// interval and CV, and VsBaseline: the ratio to the Reference cell's same
// figure, paired by round over the rounds both have. Files from before
// rounds (Round 0) give one sample per result, compared unpaired. It
// replaces the WarnNoisy, WarnBusy and WarnFailed warnings in
// run.Warnings: a reference cell's rate whose spread between rounds is not
// shown to be below NoisyCV (CVUpper), other work keeping more than
// BusyCPUs busy, and cells that failed in some rounds. It is safe to call again as rounds
// finish.
func Summarize(run *result.Run, figures func(workload string) []result.Figure) {
	SummarizeWith(run, figures, Default)
}

// SummarizeWith is Summarize with other thresholds.
func SummarizeWith(run *result.Run, figures func(workload string) []result.Figure, o Options) {
	if run == nil {
		return
	}
	o = o.norm()
	applySpeeds(run)
	c := group(run.Results)
	slopes := speedSlopes(c, figures)
	proxyLB := ProxyLB(run.Environment)
	c.podReplica = PodReplica(run.Environment)
	c.podSystem = run.Environment.System(result.SystemPodNetwork)
	c.declared = run.Environment.Replicas
	run.Summaries = nil
	for _, k := range c.order {
		ref, hasRef := Reference(k)
		for _, f := range figuresOf(figures, k.Workload) {
			ss := c.samples(k, f.Key)
			if len(ss) == 0 {
				continue
			}
			s := summary(k, f.Key, values(ss), o)
			if hasRef {
				if rs := c.samples(ref, f.Key); len(rs) > 0 {
					if cmp, ok := compareCells(ss, rs, f.Better, o, slopes[slopeKey{k.Workload, k.Step, f.Key}]); ok {
						cmp.Against = ref
						s.VsBaseline = &cmp
					}
				}
			}
			if rep, ok := c.replica(k, proxyLB); ok {
				if rs := c.samples(rep, f.Key); len(rs) > 0 {
					if cmp, ok := compareCells(ss, rs, f.Better, o, slopes[slopeKey{k.Workload, k.Step, f.Key}]); ok {
						cmp.Against = rep
						s.VsReplica = &cmp
					}
				}
			}
			run.Summaries = append(run.Summaries, s)
		}
	}
	warnings := run.Warnings[:0:0]
	for _, w := range run.Warnings {
		if !strings.HasPrefix(w, WarnNoisy) && !strings.HasPrefix(w, WarnFailed) && !strings.HasPrefix(w, WarnBusy) && !strings.HasPrefix(w, WarnSpeed) {
			warnings = append(warnings, w)
		}
	}
	if w := noiseWarning(run.Summaries, figures); w != "" {
		warnings = append(warnings, w)
	}
	if w := busyWarning(run.Results, run.Environment.Sysctls[AutogroupSysctl] == "1"); w != "" {
		warnings = append(warnings, w)
	}
	if w := speedWarning(run.Summaries, figures); w != "" {
		warnings = append(warnings, w)
	}
	warnings = append(warnings, failureWarnings(run.Results)...)
	if len(warnings) == 0 {
		warnings = nil
	}
	run.Warnings = warnings
}

// NoiseSummaries are the summaries that measure the machine's noise: the
// rate figures (throughput, transactions/s) of the reference cells, or of
// every cell when the run has no reference cell, with 2 rounds or more.
// A table prints their CV; Summarize warns above NoisyCV.
func NoiseSummaries(sums []result.Summary, figures func(workload string) []result.Figure) []result.Summary {
	var refs, all []result.Summary
	for _, s := range sums {
		if s.N < 2 || !isRate(s, figures) {
			continue
		}
		all = append(all, s)
		if isReference(s.Cell) {
			refs = append(refs, s)
		}
	}
	if len(refs) > 0 {
		return refs
	}
	return all
}

func isRate(s result.Summary, figures func(string) []result.Figure) bool {
	for _, f := range figuresOf(figures, s.Cell.Workload) {
		if f.Key == s.Figure {
			return f.Kind == result.KindRate
		}
	}
	return false
}

func figureLabel(s result.Summary, figures func(string) []result.Figure) string {
	for _, f := range figuresOf(figures, s.Cell.Workload) {
		if f.Key == s.Figure && f.Label != "" {
			return f.Label
		}
	}
	return s.Figure
}

func noiseWarning(sums []result.Summary, figures func(string) []result.Figure) string {
	var noisy []result.Summary
	for _, s := range NoiseSummaries(sums, figures) {
		if CVUpper(s.CV, s.N, CVLevel) > NoisyCV {
			noisy = append(noisy, s)
		}
	}
	if len(noisy) == 0 {
		return ""
	}
	upper := func(s result.Summary) float64 { return CVUpper(s.CV, s.N, CVLevel) }
	worst := slices.MaxFunc(noisy, func(a, b result.Summary) int { return cmpFloat(upper(a), upper(b)) })
	which := fmt.Sprintf("%s of %s", figureLabel(worst, figures), CellName(worst.Cell))
	if len(noisy) > 1 {
		which += fmt.Sprintf(", the worst of %d such figures", len(noisy))
	}
	return fmt.Sprintf("%sthe reference's spread between rounds is not shown to be below %.0f %%: it may be as large as %.0f %% (the %.0f %% upper bound of the CV of %s, %.1f %% over %d rounds); above %.0f %% differences the size of those between networks are lost in the noise: run more rounds (--repeat N), pin the agents to CPUs (--pin 0,1), stop other work on this machine",
		WarnNoisy, 100*NoisyCV, 100*upper(worst), 100*CVLevel, which, 100*worst.CV, worst.N, 100*NoisyCV)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// failureWarnings name the cells with an errored result: how many of their
// runs failed, and the first error.
func failureWarnings(rs []result.Result) []string {
	type tally struct {
		failed, total int
		first         string
	}
	var order []result.CellKey
	t := map[result.CellKey]*tally{}
	for _, r := range rs {
		k := r.Key()
		if t[k] == nil {
			t[k] = &tally{}
			order = append(order, k)
		}
		t[k].total++
		if r.Error != "" {
			if t[k].failed == 0 {
				t[k].first, _, _ = strings.Cut(r.Error, "\n")
			}
			t[k].failed++
		}
	}
	var out []string
	for _, k := range order {
		if c := t[k]; c.failed > 0 {
			rest := fmt.Sprintf("its figures are over the %d that worked", c.total-c.failed)
			if c.failed == c.total {
				rest = "it has no figures"
			}
			out = append(out, fmt.Sprintf("%s%s failed in %d of %d rounds (first: %s); %s",
				WarnFailed, CellName(k), c.failed, c.total, c.first, rest))
		}
	}
	return out
}

// OtherCPUs is the CPU, in CPUs, that work other than the cell's own used
// while it ran: the machine's busy time less the agents', the network's
// daemons' and the kernel's ksoftirqd threads' (the softirq work the kernel
// deferred for the cell's own traffic). The kernel's softirq work for the
// cell done in an agent's context is counted in both the machine's time
// and the agents' system time, so on an idle machine this is about zero or
// below. ok is false without CPU figures.
func OtherCPUs(r result.Result) (float64, bool) {
	c := r.Metrics.CPU
	if c == nil || c.WallS <= 0 {
		return 0, false
	}
	daemons := r.Metrics.Extra[result.ExtraDaemonCPU] * c.WallS
	ksoftirqd := 0.0
	if c.KSoftirqdS != nil {
		ksoftirqd = *c.KSoftirqdS
	}
	return (c.MachineS - c.AgentsS - daemons - ksoftirqd) / c.WallS, true
}

// AutogroupSysctl is the kernel switch that groups CPU time by session.
// With it on (most distributions' default), every session competes for the
// CPUs as one group, so other sessions' work takes its share from cnperf's
// agents however nice or SCHED_IDLE it is: a finding of issue 10 on the
// development VM (docs/validation.md), hence the hint in the busy warning.
const AutogroupSysctl = "kernel.sched_autogroup_enabled"

// busyWarning warns when, in the median cell, other work kept more than
// BusyCPUs busy: figures are then those of a shared machine. autogroup
// says the kernel grouped CPU time by session during the run.
func busyWarning(rs []result.Result, autogroup bool) string {
	var xs []float64
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		if v, ok := OtherCPUs(r); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return ""
	}
	m := Median(xs)
	if m <= BusyCPUs {
		return ""
	}
	w := fmt.Sprintf("%sbesides cnperf's agents, the network's daemons and the cells' ksoftirqd threads, other work kept %.1f CPUs busy during the median cell (of %d); a steady load slows every round alike, so ratios stay comparable but rates, latencies and CPU costs are those of a shared machine: stop other work on this machine, or pin the agents (--pin 0,1)",
		WarnBusy, m, len(xs))
	if autogroup {
		w += "; " + AutogroupSysctl + "=1 here, so other sessions' work competes with the agents as whole groups however nice it is: `sysctl -w " + AutogroupSysctl + "=0` while measuring lets niced work yield"
	}
	return w
}

// CompareCells compares cell a's figure f with cell b's in the same run:
// paired by the machine's speed where both recorded it (compareCells),
// by round when both have rounds (the rounds both have), otherwise as
// independent samples. Errored results are left out. ok is false when a
// side has no value, or a value <= 0. It groups the results on every
// call: to compare many pairs of one run, use a Comparer.
func CompareCells(rs []result.Result, a, b result.CellKey, f result.Figure, o Options) (result.Comparison, bool) {
	return NewComparer(rs).Compare(a, b, f, o)
}

// Comparer compares cells of one run, as CompareCells does, with the run's
// results grouped once and each figure's speed slopes estimated once: a
// ranking compares every pair of candidates on every figure, and
// regrouping the whole run for each pair made it quadratic in the number
// of results (issue 34: 10,000 results took 112 s).
type Comparer struct {
	c      cells
	slopes map[string]map[slopeKey]slope // by figure key
}

// NewComparer groups rs for Compare; rs must not change while it is used.
func NewComparer(rs []result.Result) *Comparer {
	return &Comparer{c: group(rs), slopes: map[string]map[slopeKey]slope{}}
}

// Compare is CompareCells on the Comparer's results.
func (cm *Comparer) Compare(a, b result.CellKey, f result.Figure, o Options) (result.Comparison, bool) {
	x, y := cm.c.samples(a, f.Key), cm.c.samples(b, f.Key)
	if len(x) == 0 || len(y) == 0 {
		return result.Comparison{}, false
	}
	// pair by the machine's speed where the results recorded it (their
	// relative speeds set by Summarize), the figure's slopes from them
	sls, ok := cm.slopes[f.Key]
	if !ok {
		sls = speedSlopes(cm.c, func(string) []result.Figure { return []result.Figure{f} })
		cm.slopes[f.Key] = sls
	}
	cmp, ok := compareCells(x, y, f.Better, o.norm(), sls[slopeKey{a.Workload, a.Step, f.Key}])
	cmp.Against = b
	return cmp, ok
}
