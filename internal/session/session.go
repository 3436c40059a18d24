// Package session runs a plan as `cnperf run` (and `cnperf recommend`,
// measuring) does: it checks the machine and the outputs before anything
// is built, holds the CPU latency bound, records the run with its
// environment, executes the plan (package runner), writes the run file
// after every cell, and prints the table and the files asked for.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/pmqos"
	"github.com/cnperf/cnperf/internal/progress"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

// Options are how a session runs its plan: the files it writes, the CPU
// latency bound it holds, what it prints and where, how long it may take.
type Options struct {
	Out        string         // the results file ("" for cnperf-results/run-<time>.json)
	Outputs    report.Outputs // --html, --csv, --openmetrics, --ndjson (checked before)
	CPULatency string         // --cpu-latency: µs, off or auto
	Quiet      bool           // no progress lines
	// Limit, above 0, stops the run after that long (plan.ErrTimeLimit, the
	// file written with what was measured).
	Limit   time.Duration
	Version string   // cnperf's, recorded in the run
	Command []string // the command line, recorded in the run
	// Scenario is the scenario file's scenario this run is, recorded in
	// the run (nil: a run from flags).
	Scenario *result.ScenarioRef
	Stdout   io.Writer
	Stderr   io.Writer // progress lines
	// Force lets Out replace an existing file that is not a cnperf results
	// file, or a symlink.
	Force bool
}

// Preflight checks what a run of p needs of this machine, before anything
// is built: a run on backends that build here needs root (each says what
// for), the ip command and network namespaces; a run on a cluster alone
// builds nothing here.
func Preflight(p *plan.Plan) error {
	if !p.BuildsHere() {
		return nil
	}
	if os.Geteuid() != 0 {
		for _, i := range p.Infos() {
			if i.Has(backend.BuildsHere) && i.RootFor != "" {
				return fmt.Errorf("needs root%s; run it as root (sudo cnperf run ...)", i.RootFor)
			}
		}
	}
	return lab.Preflight()
}

// Execute runs a checked plan, as `cnperf run` does: it checks the
// machine, builds, measures, writes the run file after every cell, prints
// the table and the --html and --csv outputs, and tears down, also when
// ctx ends. It returns the run and its file.
func Execute(ctx context.Context, p plan.Plan, o Options) (*result.Run, string, error) {
	limit := o.Limit
	if !o.Quiet {
		p.Log = o.Stderr
		if f, ok := o.Stderr.(*os.File); ok {
			p.Log = progress.For(f) // progress lines and a status line with the ETA
		}
	}
	if err := Preflight(&p); err != nil {
		return nil, "", err
	}
	if err := p.CheckBuildable(); err != nil {
		return nil, "", err
	}
	// before the results folder is made: a bad value leaves nothing
	release, held, err := pmqos.HoldSpec(o.CPULatency, p.Log)
	if err != nil {
		return nil, "", err
	}
	defer release()
	path, err := ResultsPath(o.Out)
	if err != nil {
		return nil, "", err
	}
	if err := result.CheckReplace(path, o.Force); err != nil {
		return nil, "", err
	}
	lock, err := result.LockFile(path)
	if err != nil {
		return nil, "", err
	}
	defer lock.Release()
	p.Out = path

	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	run := &result.Run{
		Schema: result.Schema, Version: o.Version, StartedAt: time.Now().UTC(),
		Command: o.Command, Scenario: o.Scenario, Environment: result.CaptureHost(),
	}
	run.Environment.CPULatencyUs = held
	run.Environment.Tools = toolVersions()
	run.Environment.Replicas = p.Replicas()
	execErr := runner.Execute(ctx, p, run)
	run.FinishedAt = time.Now().UTC()
	if err := saveAndShow(o, run, path, execErr); err != nil {
		return run, path, err
	}
	switch {
	case limit > 0 && ctx.Err() == context.DeadlineExceeded:
		return run, path, plan.ErrTimeLimit
	case errors.Is(execErr, context.Canceled) || errors.Is(execErr, context.DeadlineExceeded):
		return run, path, fmt.Errorf("interrupted; the lab was torn down%s", partial(len(run.Results), path))
	}
	return run, path, execErr
}

// CheckOut checks an --out path the user named as Execute will, before
// anything is planned to run (a file of scenarios checks every one's
// before the first runs); "" (the default name) passes.
func CheckOut(out string, force bool) error {
	if out == "" {
		return nil
	}
	if _, err := ResultsPath(out); err != nil {
		return err
	}
	return result.CheckReplace(out, force)
}

// ResultsPath checks where the results go before anything is built: the
// default folder is created; a folder the user named must exist, and the
// file must be one that can be replaced.
func ResultsPath(out string) (string, error) {
	path := out
	if path == "" {
		path = filepath.Join("cnperf-results", "run-"+time.Now().Format("20060102-150405")+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("results folder: %w", err)
		}
		path = result.UnusedPath(path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("--out %s: folder %s does not exist; create it first or choose another path", out, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return "", fmt.Errorf("--out %s: not a regular file; choose a file path such as results.json", out)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil && (real == "/proc" || strings.HasPrefix(real, "/proc/") || real == "/sys" || strings.HasPrefix(real, "/sys/")) {
		return "", fmt.Errorf("--out %s: cannot write results under %s; choose a file in an ordinary folder", out, real)
	}
	f, err := os.CreateTemp(dir, ".cnperf-probe-*")
	if err != nil {
		return "", fmt.Errorf("--out %s: cannot write in %s (%v); choose a writable folder", out, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return path, nil
}

func partial(n int, path string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d results so far are in %s", n, path)
}

func toolVersions() map[string]string {
	m := map[string]string{}
	if out, err := exec.Command("ip", "-V").Output(); err == nil {
		m["iproute2"] = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("iptables", "-V").Output(); err == nil {
		m["iptables"] = strings.TrimSpace(string(out))
	}
	return m
}
