package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/plan/profile"
	"github.com/cnperf/cnperf/internal/recommend"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/session"
	"github.com/cnperf/cnperf/internal/suite"
)

// cmdRecommend ranks the networks of a run file for a workload profile;
// given no file, it first measures the cells the profile's rules read on
// the local lab, bounded in time.
func cmdRecommend(c *cli.Ctx) error {
	fs := c.Flags()
	prof := fs.String("profile", "", "workload profile: "+strings.Join(recommend.Profiles(), ", "))
	constraint := fs.String("constraint", "", "comma-separated: "+strings.Join(recommend.ConstraintNames(), ", "))
	rules := fs.Bool("rules", false, "print the rule table and the constraints, and exit")
	networks := fs.String("networks", "", "without FILE: the networks to measure (default: the default suite's; a services profile: "+suite.DefaultServiceNetwork+")")
	duration := fs.Duration("duration", 2*time.Second, "without FILE: how long each cell runs")
	repeat := fs.Int("repeat", 3, "without FILE: interleaved rounds (3 or more give intervals, so ties can be told)")
	services := fs.Int("services", 1000, "without FILE, services profile: how many services to program")
	maxTime := fs.Duration("max-time", 5*time.Minute, "without FILE: refuse a plan estimated above this, and stop measuring at it (ranking what was measured)")
	out := fs.String("out", "", "without FILE: where the measured run is written (default: cnperf-results/recommend-<profile>-<time>.json)")
	force := fs.Bool("force", false, "without FILE: "+cli.ForceUsage)
	dryRun := fs.Bool("dry-run", false, "without FILE: print what would be measured and the estimate, and exit")
	quiet := fs.Bool("quiet", false, "without FILE: no progress lines")
	fs.BoolVar(&recommend.Uncorrected, "uncorrected", false, "separate candidates by any figure that differs at 5 % alone, not corrected for the number of comparisons (Holm's procedure, the default)")
	args, err := c.Parse()
	if err != nil {
		return err
	}
	path := ""
	switch len(args) {
	case 0:
	case 1:
		path = args[0]
	default:
		return cli.Usagef("unexpected argument %q: recommend ranks one results file; see `cnperf recommend --help`", args[1])
	}
	if *rules {
		recommend.WriteRules(os.Stdout)
		return nil
	}
	cons, err := recommend.CheckProfile(*prof, *constraint)
	if err != nil {
		return cli.Usage(err)
	}
	var run *result.Run
	if path == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		mp := profile.Measure{Profile: *prof, Networks: *networks, Duration: *duration, Repeat: *repeat,
			Services: *services, MaxTime: *maxTime, Cons: cons, Agent: []string{self, "agent"}}
		if err := cli.CheckOutputs(nil, *force, cli.Output{Flag: "--out", Path: *out, Example: "results.json", Kind: report.ResultsKind}); err != nil {
			return cli.Usage(err)
		}
		if run, path, err = measure(mp, *out, *force, *quiet, *dryRun); err != nil || *dryRun {
			return err
		}
	} else {
		var measuring error
		fs.Visit(func(f *flag.Flag) {
			if !slices.Contains([]string{"profile", "constraint", "rules", "uncorrected"}, f.Name) && measuring == nil {
				measuring = fmt.Errorf("--%s is for measuring; with a results file (%s) recommend only ranks it: drop --%s or the file", f.Name, path, f.Name)
			}
		})
		if measuring != nil {
			return cli.Usage(measuring)
		}
		ins, err := report.ReadRuns([]string{path})
		if err != nil {
			return err
		}
		run = ins[0].Run
	}
	rs, err := recommend.Rank(run, *prof, cons)
	if err != nil {
		return err
	}
	recommend.Write(os.Stdout, rs)
	return nil
}

// measure runs the measurement and returns the run to rank.
func measure(mp profile.Measure, out string, force, quiet, dryRun bool) (*result.Run, string, error) {
	return profile.Run(mp, dryRun, os.Stdout, func(p *plan.Plan) (*result.Run, string, error) {
		if err := session.Preflight(p); err != nil {
			return nil, "", err // before the default results folder is made
		}
		return execute(&runSetup{plan: *p, out: cmp.Or(out, profile.DefaultOut(mp.Profile)), quiet: quiet, cpuLatency: "auto", force: force}, mp.MaxTime)
	})
}
