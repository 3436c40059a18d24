package main

import (
	"io"
	"os"
	"strings"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/report"
)

// compareLong is compare's help after its usage line.
var compareLong = strings.SplitN(report.CompareUsage, "\n\n", 2)[1]

func cmdCompare(c *cli.Ctx) error { return compareMain(c, os.Stdout) }

// compareMain is `cnperf compare`; a gate's verdict is its exit status
// (report.Compare), bad usage exits 2.
func compareMain(c *cli.Ctx, stdout io.Writer) error {
	fs := c.Flags()
	failOn := fs.String("fail-on-regression", "", "judge every change against `PCT` percent (e.g. 10): exit 3 on a regression, 5 when the gate cannot decide")
	allowUndecided := fs.Bool("allow-undecided", false, "with --fail-on-regression: pass (exit 0) when no change is a regression, even if some are undecided or a run warned of a noisy or busy machine")
	junit := fs.String("junit", "", "with --fail-on-regression: also write the gate's verdicts as JUnit XML to `FILE`, one test case per cell and figure")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to `FILE`")
	force := fs.Bool("force", false, cli.ForceUsage)
	files, err := c.Parse()
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return cli.Usagef("want two results files, got %d: cnperf compare OLD.json NEW.json (files written by `cnperf run`)", len(files))
	}
	o, err := report.ParseCompareOptions(*failOn, *allowUndecided, *junit, *jsonOut, files, *force)
	if err != nil {
		return cli.Usage(err)
	}
	return report.Compare(stdout, files[0], files[1], o)
}
