// Package profile plans what `cnperf recommend` measures when it is given
// no results file: the workloads a profile's rules read (package
// recommend), on the networks asked or the default suite's (a services
// profile: the service study's network and every load balancer this
// kernel has), without the networks the constraints exclude, and refuses
// a plan estimated above the time allowed. It builds the plan directly
// (package plan), not through `cnperf run`'s arguments.
package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/recommend"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
)

// Measure is what `cnperf recommend` without a file is asked to measure.
type Measure struct {
	Profile, Networks string
	Duration          time.Duration
	Repeat, Services  int
	MaxTime           time.Duration
	Cons              []recommend.Constraint
	Agent             []string // the agent's argv (see plan.Plan)
}

// Prepared is a measurement planned: the plan, what the profile needs of
// it, what was left out and why, and how long it should take.
type Prepared struct {
	Plan     *plan.Plan
	Need     recommend.Need
	Removed  []string
	Estimate time.Duration
	m        Measure
}

// candidates are the workloads recommend may run, in the order it prefers
// them: the default suite's first (the main comparison), then the other
// suites', then the service study's.
func candidates() []string {
	var out []string
	add := func(ws ...string) {
		for _, w := range ws {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	if st, err := suite.Get("default"); err == nil {
		add(st.Workloads...)
	}
	for _, n := range suite.Names() {
		if st, err := suite.Get(n); err == nil {
			add(st.Workloads...)
		}
	}
	add(suite.ServiceWorkloads()...)
	return out
}

// request is the run the profile needs: the workloads its rules read,
// the user's networks or the default suite's (a services profile: the
// service study's network and every load balancer this kernel has).
func (mp Measure) request() (r plan.Request, need recommend.Need, notes []string, err error) {
	need, err = recommend.NeedOf(mp.Profile, candidates())
	if err != nil {
		return r, need, nil, err
	}
	if len(need.Workloads) == 0 {
		return r, need, nil, fmt.Errorf("no workload of this cnperf measures what profile %s reads (%s)", mp.Profile, strings.Join(need.Uncovered, "; "))
	}
	r = plan.Request{Workloads: strings.Join(need.Workloads, ","), Duration: mp.Duration, Repeat: mp.Repeat,
		Networks: mp.Networks, Agent: mp.Agent}
	if need.Services {
		lbs := []string{svc.None}
		for _, n := range svc.Names() {
			lb, err := svc.New(n)
			if err == nil {
				err = svc.Check(lb)
			}
			if err != nil {
				notes = append(notes, "not measured: lb "+n+": "+err.Error())
				continue
			}
			lbs = append(lbs, n)
		}
		r.LBs, r.Services = strings.Join(lbs, ","), strconv.Itoa(mp.Services)
	}
	return r, need, notes, nil
}

// withoutExcluded drops the cases of networks the constraints remove
// (they would be removed from the ranking anyway), and says which and why.
func withoutExcluded(cases []plan.Case, cons []recommend.Constraint) (kept []plan.Case, removed []string) {
	for _, c := range cases {
		if why := recommend.Excluded(c.Network, cons); why != "" && c.Network != result.BaselineNetwork {
			if r := c.Network + ": " + why; !slices.Contains(removed, r) {
				removed = append(removed, r)
			}
			continue
		}
		kept = append(kept, c)
	}
	return kept, removed
}

// estimate is how long the run would take: every cell of every round,
// each its duration plus the set-up a cell costs here (agents, servers,
// the CPU meter: about 1.5 s), building each network (about 5 s), and
// programming the services once per load balancer and count (about 10 ms
// a service: iptables took 10.9 s for 1,000 here, docs/report.md).
func estimate(cells, rounds, networks, services int, d time.Duration) time.Duration {
	return time.Duration(cells*rounds)*(d+1500*time.Millisecond) + time.Duration(networks)*5*time.Second +
		time.Duration(services)*10*time.Millisecond
}

// Prepare plans the measurement: the workloads the profile's rules read,
// on the networks asked (those the constraints exclude left out), within
// MaxTime.
func Prepare(mp Measure) (*Prepared, error) {
	if mp.Repeat < 1 || mp.Duration <= 0 || mp.MaxTime <= 0 || mp.Services < 1 {
		return nil, fmt.Errorf("--repeat, --duration, --max-time and --services must be above 0; use e.g. --repeat 3 --duration 2s")
	}
	r, need, notes, err := mp.request()
	if err != nil {
		return nil, err
	}
	p, err := plan.Build(r)
	if err != nil {
		return nil, err
	}
	var removed []string
	p.Cases, removed = withoutExcluded(p.Cases, mp.Cons)
	removed = append(removed, notes...)
	candidates := 0
	for _, c := range p.Cases {
		if c.Network != result.BaselineNetwork {
			candidates++
		}
	}
	switch {
	case candidates == 0:
		return nil, fmt.Errorf("the constraints remove every network to measure (%s); name others with --networks", strings.Join(removed, "; "))
	case candidates == 1 && !need.Services:
		return nil, fmt.Errorf("one network left to measure (%s): nothing to rank it against; name more with --networks", p.Cases[len(p.Cases)-1].Network)
	}
	cells := len(p.Cases) * len(p.Workloads)
	if len(p.LBs) > 0 {
		cells *= len(p.LBs) * max(1, len(p.Services))
	}
	nets := map[string]bool{}
	for _, c := range p.Cases {
		nets[c.Network] = true
	}
	programmed := 0
	for _, n := range p.Services {
		programmed += n * len(p.LBs)
	}
	est := estimate(cells, p.Repeat, len(nets), programmed, mp.Duration)
	if est > mp.MaxTime {
		return nil, fmt.Errorf("profile %s needs %d cells x %d rounds here, about %s, above --max-time %s: use a larger --max-time, or fewer --repeat, a shorter --duration or fewer --networks",
			mp.Profile, cells, p.Repeat, est.Round(time.Second), mp.MaxTime)
	}
	return &Prepared{Plan: p, Need: need, Removed: removed, Estimate: est, m: mp}, nil
}

// DefaultOut is where a measured run goes when --out names nothing.
func DefaultOut(profile string) string {
	if err := os.MkdirAll("cnperf-results", 0o755); err != nil {
		return ""
	}
	return "cnperf-results/recommend-" + profile + "-" + time.Now().Format("20060102-150405") + ".json"
}

// Describe says on w what will be measured, and the estimate.
func (pr *Prepared) Describe(w io.Writer) {
	mp, need, removed, est := pr.m, pr.Need, pr.Removed, pr.Estimate
	fmt.Fprintf(w, "recommend --profile %s: no results file given, measuring what its rules read on the local lab:\n", mp.Profile)
	for _, wl := range need.Workloads {
		fmt.Fprintf(w, "  %s: %s\n", wl, strings.Join(need.Covers[wl], "; "))
	}
	if need.Services {
		fmt.Fprintf(w, "  through ClusterIP services: --lb %s --services %d\n", strings.Join(pr.Plan.LBs, ","), mp.Services)
	}
	var cells []string
	for _, c := range pr.Plan.Cases {
		cells = append(cells, c.Network+" "+string(c.Placement))
	}
	fmt.Fprintf(w, "  networks: %s\n", strings.Join(cells, ", "))
	for _, r := range removed {
		if strings.HasPrefix(r, "not measured: ") {
			fmt.Fprintf(w, "  %s\n", r)
			continue
		}
		fmt.Fprintf(w, "  removed by the constraints, not measured: %s\n", r)
	}
	fmt.Fprintf(w, "  %d rounds of %s cells, estimated %s (--max-time %s)\n\n", pr.Plan.Repeat, mp.Duration, est.Round(time.Second), mp.MaxTime)
}

// Run prepares the measurement, says what it will measure on w and,
// unless dryRun, has exec run the plan within MaxTime (exec's error
// plan.ErrTimeLimit: what was measured by then is ranked).
func Run(mp Measure, dryRun bool, w io.Writer, exec func(*plan.Plan) (*result.Run, string, error)) (*result.Run, string, error) {
	pr, err := Prepare(mp)
	if err != nil {
		return nil, "", exitcode.With(err, exitcode.Usage) // the profile, its flags or its estimate refused
	}
	pr.Describe(w)
	if dryRun {
		return nil, "", nil
	}
	run, path, err := exec(pr.Plan)
	switch {
	case errors.Is(err, plan.ErrTimeLimit) && run != nil && len(run.Results) > 0:
		fmt.Fprintf(w, "\nstopped at --max-time %s with %d results (%s): ranking what was measured\n", mp.MaxTime, len(run.Results), path)
	case errors.Is(err, plan.ErrTimeLimit):
		return nil, "", fmt.Errorf("nothing was measured within --max-time %s; use a larger one", mp.MaxTime)
	case err != nil:
		return nil, "", err
	}
	fmt.Fprintln(w)
	return run, path, nil
}
