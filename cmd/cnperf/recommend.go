package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/recommend"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
)

// cmdRecommend ranks the networks of a run file for a workload profile;
// given no file, it first measures the cells the profile's rules read on
// the local lab, bounded in time.
func cmdRecommend(args []string) error {
	fs := newFlags("recommend [FILE]")
	profile := fs.String("profile", "", "workload profile: "+strings.Join(recommend.Profiles(), ", "))
	constraint := fs.String("constraint", "", "comma-separated: "+strings.Join(recommend.ConstraintNames(), ", "))
	rules := fs.Bool("rules", false, "print the rule table and the constraints, and exit")
	networks := fs.String("networks", "", "without FILE: the networks to measure (default: the default suite's; a services profile: "+suite.DefaultServiceNetwork+")")
	duration := fs.Duration("duration", 2*time.Second, "without FILE: how long each cell runs")
	repeat := fs.Int("repeat", 3, "without FILE: interleaved rounds (3 or more give intervals, so ties can be told)")
	services := fs.Int("services", 1000, "without FILE, services profile: how many services to program")
	maxTime := fs.Duration("max-time", 5*time.Minute, "without FILE: refuse a plan estimated above this, and stop measuring at it (ranking what was measured)")
	out := fs.String("out", "", "without FILE: where the measured run is written (default: cnperf-results/recommend-<profile>-<time>.json)")
	dryRun := fs.Bool("dry-run", false, "without FILE: print what would be measured and the estimate, and exit")
	quiet := fs.Bool("quiet", false, "without FILE: no progress lines")
	path, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, rest = args[0], args[1:]
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if *rules {
		recommend.WriteRules(os.Stdout)
		return nil
	}
	if *profile == "" {
		return fmt.Errorf("--profile is required: one of %s", strings.Join(recommend.Profiles(), ", "))
	}
	if !contains(recommend.Profiles(), *profile) {
		return fmt.Errorf("unknown profile %q; use one of %s", *profile, strings.Join(recommend.Profiles(), ", "))
	}
	cons, err := recommend.ParseConstraints(*constraint)
	if err != nil {
		return err
	}
	var run *result.Run
	if path == "" {
		mp := measurePlan{profile: *profile, networks: *networks, duration: *duration, repeat: *repeat,
			services: *services, maxTime: *maxTime, out: *out, quiet: *quiet, cons: cons}
		if *dryRun {
			return mp.dryRun()
		}
		if run, path, err = mp.measure(); err != nil {
			return err
		}
	} else {
		for _, f := range []string{"networks", "duration", "repeat", "services", "max-time", "out", "dry-run", "quiet"} {
			if flagGiven(fs, f) {
				return fmt.Errorf("--%s is for measuring; with a results file (%s) recommend only ranks it: drop --%s or the file", f, path, f)
			}
		}
		ins, err := readRuns([]string{path})
		if err != nil {
			return err
		}
		run = ins[0].Run
	}
	rs, err := recommend.Rank(run, *profile, cons)
	if err != nil {
		return err
	}
	recommend.Write(os.Stdout, rs)
	return nil
}

// measurePlan is what `cnperf recommend` without a file measures.
type measurePlan struct {
	profile, networks string
	duration          time.Duration
	repeat, services  int
	maxTime           time.Duration
	out               string
	quiet             bool
	cons              []recommend.Constraint
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
	add(suite.Default.Workloads...)
	for _, n := range suite.Names() {
		if st, err := suite.Get(n); err == nil {
			add(st.Workloads...)
		}
	}
	add(suite.ServiceWorkloads()...)
	return out
}

// runArgs turns the plan into `cnperf run` arguments, checked by the same
// parser: the workloads the profile's rules need, the user's networks or
// the default suite's (a services profile: the service study's network
// and every load balancer this kernel has).
func (mp measurePlan) runArgs() (args []string, need recommend.Need, notes []string, err error) {
	need, err = recommend.NeedOf(mp.profile, candidates())
	if err != nil {
		return nil, need, nil, err
	}
	if len(need.Workloads) == 0 {
		return nil, need, nil, fmt.Errorf("no workload of this cnperf measures what profile %s reads (%s)", mp.profile, strings.Join(need.Uncovered, "; "))
	}
	args = []string{"--workloads", strings.Join(need.Workloads, ","), "--duration", mp.duration.String(), "--repeat", strconv.Itoa(mp.repeat)}
	if mp.networks != "" {
		args = append(args, "--networks", mp.networks)
	}
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
		args = append(args, "--lb", strings.Join(lbs, ","), "--services", strconv.Itoa(mp.services))
	}
	if mp.out != "" {
		args = append(args, "--out", mp.out)
	}
	if mp.quiet {
		args = append(args, "--quiet")
	}
	return args, need, notes, nil
}

// withoutExcluded drops the cases of networks the constraints remove
// (they would be removed from the ranking anyway), and says which and why.
func withoutExcluded(cases []runner.Case, cons []recommend.Constraint) (kept []runner.Case, removed []string) {
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
// a service: iptables took 10.9 s for 1,000 here, README).
func estimate(cells, rounds, networks, services int, d time.Duration) time.Duration {
	return time.Duration(cells*rounds)*(d+1500*time.Millisecond) + time.Duration(networks)*5*time.Second +
		time.Duration(services)*10*time.Millisecond
}

func (mp measurePlan) prepare() (*runSetup, recommend.Need, []string, time.Duration, error) {
	if mp.repeat < 1 || mp.duration <= 0 || mp.maxTime <= 0 || mp.services < 1 {
		return nil, recommend.Need{}, nil, 0, fmt.Errorf("--repeat, --duration, --max-time and --services must be above 0; use e.g. --repeat 3 --duration 2s")
	}
	args, need, notes, err := mp.runArgs()
	if err != nil {
		return nil, need, nil, 0, err
	}
	setup, err := parseRun(args)
	if err != nil {
		return nil, need, nil, 0, err
	}
	var removed []string
	setup.plan.Cases, removed = withoutExcluded(setup.plan.Cases, mp.cons)
	removed = append(removed, notes...)
	candidates := 0
	for _, c := range setup.plan.Cases {
		if c.Network != result.BaselineNetwork {
			candidates++
		}
	}
	switch {
	case candidates == 0:
		return nil, need, removed, 0, fmt.Errorf("the constraints remove every network to measure (%s); name others with --networks", strings.Join(removed, "; "))
	case candidates == 1 && !need.Services:
		return nil, need, removed, 0, fmt.Errorf("one network left to measure (%s): nothing to rank it against; name more with --networks", setup.plan.Cases[len(setup.plan.Cases)-1].Network)
	}
	cells := len(setup.plan.Cases) * len(setup.plan.Workloads)
	if len(setup.plan.LBs) > 0 {
		cells *= len(setup.plan.LBs) * max(1, len(setup.plan.Services))
	}
	nets := map[string]bool{}
	for _, c := range setup.plan.Cases {
		nets[c.Network] = true
	}
	programmed := 0
	for _, n := range setup.plan.Services {
		programmed += n * len(setup.plan.LBs)
	}
	est := estimate(cells, setup.plan.Repeat, len(nets), programmed, mp.duration)
	if est > mp.maxTime {
		return nil, need, removed, est, fmt.Errorf("profile %s needs %d cells x %d rounds here, about %s, above --max-time %s: use a larger --max-time, or fewer --repeat, a shorter --duration or fewer --networks",
			mp.profile, cells, setup.plan.Repeat, est.Round(time.Second), mp.maxTime)
	}
	return setup, need, removed, est, nil
}

func defaultRecommendOut(profile string) string {
	if err := os.MkdirAll("cnperf-results", 0o755); err != nil {
		return ""
	}
	return "cnperf-results/recommend-" + profile + "-" + time.Now().Format("20060102-150405") + ".json"
}

func (mp measurePlan) describe(setup *runSetup, need recommend.Need, removed []string, est time.Duration) {
	fmt.Printf("recommend --profile %s: no results file given, measuring what its rules read on the local lab:\n", mp.profile)
	for _, w := range need.Workloads {
		fmt.Printf("  %s: %s\n", w, strings.Join(need.Covers[w], "; "))
	}
	if need.Services {
		fmt.Printf("  through ClusterIP services: --lb %s --services %d\n", strings.Join(setup.plan.LBs, ","), mp.services)
	}
	var cells []string
	for _, c := range setup.plan.Cases {
		cells = append(cells, c.Network+" "+string(c.Placement))
	}
	fmt.Printf("  networks: %s\n", strings.Join(cells, ", "))
	for _, r := range removed {
		if strings.HasPrefix(r, "not measured: ") {
			fmt.Printf("  %s\n", r)
			continue
		}
		fmt.Printf("  removed by the constraints, not measured: %s\n", r)
	}
	fmt.Printf("  %d rounds of %s cells, estimated %s (--max-time %s)\n\n", setup.plan.Repeat, mp.duration, est.Round(time.Second), mp.maxTime)
}

func (mp measurePlan) dryRun() error {
	setup, need, removed, est, err := mp.prepare()
	if err != nil {
		return err
	}
	mp.describe(setup, need, removed, est)
	return nil
}

// measure runs the plan and returns the run to rank.
func (mp measurePlan) measure() (*result.Run, string, error) {
	setup, need, removed, est, err := mp.prepare()
	if err != nil {
		return nil, "", err
	}
	if err := preflightFor(setup.plan.BackendName); err != nil {
		return nil, "", err // before the default results folder is made
	}
	if setup.out == "" {
		setup.out = defaultRecommendOut(mp.profile)
	}
	mp.describe(setup, need, removed, est)
	run, path, err := execute(setup, mp.maxTime)
	switch {
	case errors.Is(err, errTimeLimit) && run != nil && len(run.Results) > 0:
		fmt.Printf("\nstopped at --max-time %s with %d results (%s): ranking what was measured\n", mp.maxTime, len(run.Results), path)
	case errors.Is(err, errTimeLimit):
		return nil, "", fmt.Errorf("nothing was measured within --max-time %s; use a larger one", mp.maxTime)
	case err != nil:
		return nil, "", err
	}
	fmt.Println()
	return run, path, nil
}

// flagGiven says the user set flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
