package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cnperf/cnperf/internal/exitcode"

	"github.com/cnperf/cnperf/internal/report"
)

// compare's usage error status (the gate's come from report.Compare).
const compareUsageExit = exitcode.Usage

func cmdCompare(args []string) error { return compareMain(args, os.Stdout) }

func compareMain(args []string, stdout io.Writer) error {
	fs := newFlags("compare")
	fs.SetOutput(io.Discard)
	failOn := fs.String("fail-on-regression", "", "judge every change against `PCT` percent (e.g. 10): exit 3 on a regression, 5 when the gate cannot decide")
	allowUndecided := fs.Bool("allow-undecided", false, "with --fail-on-regression: pass (exit 0) when no change is a regression, even if some are undecided or a run warned of a noisy or busy machine")
	junit := fs.String("junit", "", "with --fail-on-regression: also write the gate's verdicts as JUnit XML to `FILE`, one test case per cell and figure")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to `FILE`")
	usage := func(format string, a ...any) error {
		return fmt.Errorf(format+" (%w)", append(a, compareUsageExit)...)
	}
	// Flags may come before, between or after the two files.
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, report.CompareUsage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return err
			}
			return usage("%v; see `cnperf compare -h`", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 2 {
		return usage("want two results files, got %d: cnperf compare OLD.json NEW.json (files written by `cnperf run`)", len(files))
	}
	o, err := report.ParseCompareOptions(*failOn, *allowUndecided, *junit, *jsonOut)
	if err != nil {
		return usage("%v", err)
	}
	return report.Compare(stdout, files[0], files[1], o)
}
