package stats

import (
	"fmt"
	"maps"
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
	// OnlyOld and OnlyNew are the cells measured in one run only.
	OnlyOld []result.CellKey `json:"only_old,omitempty"`
	OnlyNew []result.CellKey `json:"only_new,omitempty"`
	// Warnings: the environments differ, a run was noisy or incomplete.
	Warnings []string `json:"warnings,omitempty"`
}

// Change is one figure of one cell in both runs.
type Change struct {
	Cell   result.CellKey `json:"cell"`
	Figure result.Figure  `json:"figure"`
	Old    Side           `json:"old"`
	New    Side           `json:"new"`
	// Change is New against Old: Ratio is New/Old, unpaired (the runs'
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
	for _, k := range cn.order {
		if _, ok := co.results[k]; !ok {
			rc.OnlyNew = append(rc.OnlyNew, k)
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
			rc.OnlyOld = append(rc.OnlyOld, k)
		}
	}
	if d := envDiff(oldRun.Environment, newRun.Environment); d != "" {
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
			if strings.HasPrefix(w, WarnNoisy) {
				rc.Warnings = append(rc.Warnings, r.name+" run: "+w)
			}
		}
	}
	return rc
}

func side(s result.Summary) Side {
	return Side{N: s.N, Median: s.Median, CILow: s.CILow, CIHigh: s.CIHigh, CILevel: s.CILevel, CIMethod: s.CIMethod, CV: s.CV}
}

// Regressions are the changes significantly worse by more than limit (a
// fraction: 0.1 = 10 %): Verdict "worse" (the interval beyond the minimum
// effect, p < alpha) and the ratio itself past 1-limit (higher is better)
// or 1+limit (lower is better).
func (rc *RunComparison) Regressions(limit float64) []Change {
	var out []Change
	for _, c := range rc.Changes {
		if c.Change.Verdict != Worse {
			continue
		}
		r := c.Change.Ratio
		if (c.Figure.Better == result.HigherBetter && r < 1-limit) || (c.Figure.Better == result.LowerBetter && r > 1+limit) {
			out = append(out, c)
		}
	}
	return out
}

// envDiff names what differs between two environments that changes
// results: "kernel 6.1 → 6.8, cpus 2 → 4".
func envDiff(a, b result.Environment) string {
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
