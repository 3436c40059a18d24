package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
)

// CompareSchema is the "schema" of a RunComparison written as JSON.
const CompareSchema = "cnperf/compare/v1"

// RunComparison is two runs side by side, cell by cell: what changed from
// Old to New (e.g. before and after a kernel or cnperf change).
type RunComparison struct {
	Schema    string   `json:"schema"`
	Old       string   `json:"old,omitempty"` // where the runs came from, for people
	New       string   `json:"new,omitempty"`
	Level     float64  `json:"ci_level"`
	Alpha     float64  `json:"alpha"`
	MinEffect float64  `json:"min_effect"`
	Changes   []Change `json:"changes"`
	// OnlyOld and OnlyNew are the cells measured in one run only (not
	// run at all in the other).
	OnlyOld []result.CellKey `json:"only_old,omitempty"`
	OnlyNew []result.CellKey `json:"only_new,omitempty"`
	// FailedOld and FailedNew are the cells one run measured and the
	// other ran but failed in every round: no figure to compare.
	FailedOld []result.CellKey `json:"failed_old,omitempty"`
	FailedNew []result.CellKey `json:"failed_new,omitempty"`
	// Warnings: the environments differ, a run was noisy, busy or
	// incomplete.
	Warnings []string `json:"warnings,omitempty"`
	// GateLimit and Judged: with `--fail-on-regression P`, the limit (0.1
	// for 10 %) and the gate's verdict on every change it judged.
	GateLimit float64     `json:"gate_limit,omitempty"`
	Judged    []Judgement `json:"gate,omitempty"`
}

// Change is one figure of one cell in both runs.
type Change struct {
	Cell   result.CellKey `json:"cell"`
	Figure result.Figure  `json:"figure"`
	Old    Side           `json:"old"`
	New    Side           `json:"new"`
	// Change is New against Old: Ratio is New/Old as the ratio of the
	// geometric means over every round of each run, unpaired (the runs'
	// rounds were not interleaved with each other), Welch's t on logs.
	Change result.Comparison `json:"change"`
}

// Side is one run's figure over its rounds.
type Side struct {
	N        int     `json:"n"`
	Median   float64 `json:"median"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	CILevel  float64 `json:"ci_level"` // 0: no interval (N < 2)
	CIMethod string  `json:"ci_method"`
	CV       float64 `json:"cv"`
}

// CompareRuns compares every cell both runs measured, figure by figure
// (figures as for Summarize: nil means DefaultFigures), New against Old,
// with all of each run's samples of the cell (every round; results with an
// error are left out).
func CompareRuns(oldRun, newRun *result.Run, figures func(workload string) []result.Figure, o Options) *RunComparison {
	o = o.norm()
	rc := &RunComparison{Schema: CompareSchema, Level: o.Level, Alpha: o.Alpha, MinEffect: o.MinEffect, Changes: []Change{}}
	co, cn := group(oldRun.Results), group(newRun.Results)
	ranOld, ranNew := ran(oldRun.Results), ran(newRun.Results)
	for _, k := range cn.order {
		if _, ok := co.results[k]; !ok {
			if ranOld[k] {
				rc.FailedOld = append(rc.FailedOld, k)
			} else {
				rc.OnlyNew = append(rc.OnlyNew, k)
			}
			continue
		}
		for _, f := range figuresOf(figures, k.Workload) {
			a, b := values(cn.samples(k, f.Key)), values(co.samples(k, f.Key))
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			c, ok := Unpaired(a, b, f.Better, o)
			if !ok {
				continue
			}
			c.Against = k
			so, sn := summary(k, f.Key, b, o), summary(k, f.Key, a, o)
			rc.Changes = append(rc.Changes, Change{Cell: k, Figure: f, Old: side(so), New: side(sn), Change: c})
		}
	}
	for _, k := range co.order {
		if _, ok := cn.results[k]; !ok {
			if ranNew[k] {
				rc.FailedNew = append(rc.FailedNew, k)
			} else {
				rc.OnlyOld = append(rc.OnlyOld, k)
			}
		}
	}
	if d := EnvDiff(oldRun.Environment, newRun.Environment); d != "" {
		rc.Warnings = append(rc.Warnings, "the runs' environments differ ("+d+"): a change may come from that, not from the networks")
	}
	for _, r := range []struct {
		name string
		run  *result.Run
	}{{"old", oldRun}, {"new", newRun}} {
		if r.run.Incomplete {
			rc.Warnings = append(rc.Warnings, r.name+" run is incomplete: it was cut short or is still running")
		}
		for _, w := range r.run.Warnings {
			if strings.HasPrefix(w, WarnNoisy) || strings.HasPrefix(w, WarnBusy) {
				rc.Warnings = append(rc.Warnings, r.name+" run: "+w)
			}
		}
	}
	return rc
}

// ran is every cell of rs, failed or not.
func ran(rs []result.Result) map[result.CellKey]bool {
	out := make(map[result.CellKey]bool, len(rs))
	for _, r := range rs {
		out[r.Key()] = true
	}
	return out
}

func side(s result.Summary) Side {
	return Side{N: s.N, Median: s.Median, CILow: s.CILow, CIHigh: s.CIHigh, CILevel: s.CILevel, CIMethod: s.CIMethod, CV: s.CV}
}

// The gate's verdicts on one change (Judgement.Verdict).
const (
	GatePass       = "pass"
	GateRegression = "regression"
	GateUndecided  = "undecided"
)

// Judgement is the regression gate's verdict on one figure of one cell.
type Judgement struct {
	Cell    result.CellKey `json:"cell"`
	Figure  string         `json:"figure,omitempty"` // a Metrics key; empty for a cell only in the old run
	Verdict string         `json:"verdict"`          // pass, regression or undecided
	Why     string         `json:"why"`
}

// Gate judges every change whose figure has a direction against limit (a
// fraction: 0.1 = 10 %), from its interval, never its point alone: a
// regression when the whole interval is worse than the limit (higher is
// better: the interval's upper end below 1-limit; lower is better: its
// lower end above 1+limit), a pass when its worse end is within the limit
// (a regression of more than limit is ruled out at the interval's level),
// undecided otherwise: no interval (one round), or an interval that
// reaches past the limit without lying beyond it. A cell measured only in
// the old run is undecided too: the new run did not test it.
func (rc *RunComparison) Gate(limit float64) []Judgement {
	var out []Judgement
	lo, hi := 1-limit, 1+limit
	for _, c := range rc.Changes {
		b := c.Figure.Better
		if b != result.HigherBetter && b != result.LowerBetter {
			continue
		}
		j := Judgement{Cell: c.Cell, Figure: c.Figure.Key}
		x := c.Change
		iv := fmt.Sprintf("%.2fx [%.2f, %.2f]", x.Ratio, x.CILow, x.CIHigh)
		switch {
		case x.CILevel <= 0:
			j.Verdict, j.Why = GateUndecided, fmt.Sprintf("not tested: %d and %d round(s), no interval", c.Old.N, c.New.N)
		case b == result.HigherBetter && x.CIHigh < lo:
			j.Verdict, j.Why = GateRegression, fmt.Sprintf("%s: the whole interval below %.2f", iv, lo)
		case b == result.LowerBetter && x.CILow > hi:
			j.Verdict, j.Why = GateRegression, fmt.Sprintf("%s: the whole interval above %.2f", iv, hi)
		case b == result.HigherBetter && x.CILow >= lo, b == result.LowerBetter && x.CIHigh <= hi:
			j.Verdict, j.Why = GatePass, iv+": within the limit"
		case b == result.HigherBetter:
			j.Verdict, j.Why = GateUndecided, fmt.Sprintf("%s: reaches below %.2f, not shown beyond it", iv, lo)
		default:
			j.Verdict, j.Why = GateUndecided, fmt.Sprintf("%s: reaches above %.2f, not shown beyond it", iv, hi)
		}
		if j.Verdict == GateUndecided && x.CILevel > 0 {
			if k := gateRounds(x, limit, b == result.HigherBetter); k > 0 {
				j.Why += fmt.Sprintf("; about %d rounds in each run would decide it at this spread", k)
			}
		}
		out = append(out, j)
	}
	for _, k := range rc.OnlyOld {
		out = append(out, Judgement{Cell: k, Verdict: GateUndecided, Why: "not tested: measured in the old run only"})
	}
	for _, k := range rc.FailedNew {
		out = append(out, Judgement{Cell: k, Verdict: GateUndecided, Why: "not tested: failed in every round of the new run"})
	}
	return out
}

// Compared counts the judgements that compared a figure in both runs:
// a gate with none judged nothing, and must not pass.
func Compared(js []Judgement) int {
	n := 0
	for _, j := range js {
		if j.Figure != "" {
			n++
		}
	}
	return n
}

// gateRounds estimates how many rounds in each run would put the worse end
// of x's interval clear of the limit, one way or the other, if the ratio
// and the spread stayed as observed: the standard error is read back off
// the interval (its half-width in logs over t at N+NAgainst-2 degrees of
// freedom) and shrinks as 1/sqrt(rounds). 0: no estimate within maxRounds.
func gateRounds(x result.Comparison, limit float64, higher bool) int {
	n := x.N
	if x.NAgainst > 0 {
		n = min(n, x.NAgainst)
	}
	df0 := float64(x.N + x.NAgainst - 2)
	if x.NAgainst == 0 {
		df0 = float64(x.N - 1)
	}
	if n < 2 || df0 <= 0 || x.CILow <= 0 || limit >= 1 {
		return 0
	}
	q := 1 - (1-x.CILevel)/2
	se0 := (math.Log(x.CIHigh) - math.Log(x.CILow)) / 2 / TQuantile(q, df0)
	m, bound := math.Log(x.Ratio), math.Log(1-limit)
	if !higher {
		m, bound = -m, -math.Log(1+limit) // mirror: a rise is the regression
	}
	decides := func(k int) bool {
		h := TQuantile(q, 2*float64(k)-2) * se0 * math.Sqrt(float64(n)/float64(k))
		return m+h < bound || m-h >= bound
	}
	if se0 <= 0 || math.IsNaN(se0) || !decides(maxRounds) {
		return 0
	}
	lo, hi := n, maxRounds
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// MachineWarnings are the runs' warnings that the machine itself was
// noisy or busy: a gate's pass is not one on such a run.
func (rc *RunComparison) MachineWarnings() []string {
	var out []string
	for _, w := range rc.Warnings {
		if strings.Contains(w, WarnNoisy) || strings.Contains(w, WarnBusy) {
			out = append(out, w)
		}
	}
	return out
}

// EnvDiff names what differs between two environments that changes
// results: "kernel 6.1 → 6.8, cpus 2 → 4".
func EnvDiff(a, b result.Environment) string {
	var d []string
	add := func(name, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %q → %q", name, x, y))
		}
	}
	add("host", a.Hostname, b.Hostname)
	add("kernel", a.Kernel, b.Kernel)
	add("cpu", a.CPUModel, b.CPUModel)
	add("cpus", fmt.Sprint(a.CPUs), fmt.Sprint(b.CPUs))
	add("underlay mtu", fmt.Sprint(a.UnderlayMTU), fmt.Sprint(b.UnderlayMTU))
	add("backend", a.Backend, b.Backend)
	add("cpuidle", a.CPUIdle, b.CPUIdle)
	lat := func(p *int) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprint(*p)
	}
	add("cpu latency bound", lat(a.CPULatencyUs), lat(b.CPULatencyUs))
	for _, m := range []struct {
		name string
		a, b map[string]string
	}{{"sysctl", a.Sysctls, b.Sysctls}, {"offload", a.Offloads, b.Offloads}} {
		keys := slices.Sorted(maps.Keys(m.a))
		for k := range m.b {
			if _, ok := m.a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			add(m.name+" "+k, m.a[k], m.b[k])
		}
	}
	return strings.Join(d, ", ")
}
