package scenario

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/suite"
)

// Prepare reads the scenarios of the file at path and makes each one's
// setup before anything runs, so that a usage error in any is found
// first. fresh gives a new flag set of `cnperf run` and the function that
// checks it once parsed (given the scenario's suite written out, if any);
// on it the scenario's values are set, then the command line (args,
// parsed by parse) over them: a flag the command line gives (cmdline is
// its parsed flag set) replaces the scenario's value. Two scenarios may
// not write the same out: file.
func Prepare[T any](path string, cmdline *flag.FlagSet, args []string, fresh func() (*flag.FlagSet, func(*suite.Suite) (T, error)), parse func(*flag.FlagSet, []string) error) ([]Scenario, []T, error) {
	check, _ := fresh()
	scs, err := Load(path, check)
	if err != nil {
		return nil, nil, err
	}
	given, outs := map[string]bool{}, map[string]string{}
	cmdline.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var setups []T
	for _, sc := range scs {
		fs, finish := fresh()
		if err := sc.Apply(fs, given); err != nil {
			return nil, nil, err
		}
		if err := parse(fs, args); err != nil {
			return nil, nil, err
		}
		def := sc.Suite
		if given["suite"] {
			def = nil
		}
		setup, err := finish(def)
		if err != nil {
			return nil, nil, sc.Wrap(err)
		}
		if out := fs.Lookup("out"); out != nil && out.Value.String() != "" {
			if other, dup := outs[out.Value.String()]; dup {
				return nil, nil, sc.Wrap(fmt.Errorf("--out %s is scenario %q's too; give each scenario its own out:", out.Value, other))
			}
			outs[out.Value.String()] = sc.Name
		}
		setups = append(setups, setup)
	}
	return scs, setups, nil
}

// RunAll runs the scenarios in order (run(i) the i-th), all of them but
// after an interruption (ctx ended), and says how it went (Outcome).
func RunAll(ctx context.Context, scs []Scenario, run func(i int) error) error {
	var errs []error
	for i := range scs {
		if errs = append(errs, run(i)); ctx.Err() != nil {
			break // the scenarios after it do not start
		}
	}
	return Outcome(scs, errs)
}

// Outcome is how running scenarios in order went (errs[i] the i-th's,
// nil when it passed; past len(errs), or after an interruption, not run):
// nil when all passed, else one line naming each that failed, with the
// worst exit status: a scenario that failed (1, or the status its error
// carries) over one whose cells failed (4), and that over a pass.
func Outcome(scs []Scenario, errs []error) error {
	var lines []string
	worst := exitcode.Code(0)
	for i, err := range errs {
		if err == nil {
			continue
		}
		lines = append(lines, fmt.Sprintf("scenario %q: %v", scs[i].Name, err))
		code := exitcode.Code(1)
		var c exitcode.Code
		if errors.As(err, &c) {
			code = c
		}
		if worst == 0 || worst == exitcode.CellsFailed {
			worst = code
		}
	}
	// the scenarios an interruption kept from starting did not pass
	// either (issue 34: Ctrl-C in the 2nd of 3 said "1 of 3 did not pass")
	for _, sc := range scs[min(len(errs), len(scs)):] {
		lines = append(lines, fmt.Sprintf("scenario %q: not run (interrupted before it)", sc.Name))
		if worst == 0 || worst == exitcode.CellsFailed {
			worst = 1
		}
	}
	if len(lines) == 0 {
		return nil
	}
	msg := strings.Join(lines, "; ")
	if len(scs) > 1 {
		msg = fmt.Sprintf("%d of %d scenarios did not pass: %s", len(lines), len(scs), msg)
	}
	return exitcode.With(errors.New(msg), worst)
}
