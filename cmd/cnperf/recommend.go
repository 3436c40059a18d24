package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cnperf/cnperf/internal/recommend"
)

// cmdRecommend ranks the networks of a run file for a workload profile.
func cmdRecommend(args []string) error {
	fs := newFlags("recommend FILE")
	profile := fs.String("profile", "", "workload profile: "+strings.Join(recommend.Profiles(), ", "))
	constraint := fs.String("constraint", "", "comma-separated: "+strings.Join(recommend.ConstraintNames(), ", "))
	rules := fs.Bool("rules", false, "print the rule table and the constraints, and exit")
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
	if path == "" {
		return fmt.Errorf("name a results file: cnperf recommend cnperf-results/run-....json --profile %s", *profile)
	}
	ins, err := readRuns([]string{path})
	if err != nil {
		return err
	}
	rs, err := recommend.Rank(ins[0].Run, *profile, cons)
	if err != nil {
		return err
	}
	recommend.Write(os.Stdout, rs)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
