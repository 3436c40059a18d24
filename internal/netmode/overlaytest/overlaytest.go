// Package overlaytest holds the tests the control-plane-driven modes
// (docker-overlay, flannel-udp, weave) share beyond labtest's: a golden
// recording under given mode options, and the standard integration test
// with mode options set.
package overlaytest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
)

// Golden records mode name's commands (no root) with the given mode
// options: the hosts, Setup, pods c1 and s1 on h1, s2 on h2, and what each
// placement dials; it compares them with testdata/FILE.golden.
func Golden(t *testing.T, name string, opts map[string]string, file string) {
	t.Helper()
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	rec := &lab.Recorder{}
	l, err := lab.New(lab.Config{ID: "test", Exec: rec, NoStateDirs: true, ModeOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	c, err := m.AddPod(ctx, l, l.Hosts[0], "c1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		pl   netmode.Placement
		host int
		name string
	}{{netmode.SameHost, 0, "s1"}, {netmode.CrossHost, 1, "s2"}} {
		if ok, _ := netmode.Allows(m, p.pl); !ok {
			continue
		}
		s, err := m.AddPod(ctx, l, l.Hosts[p.host], p.name)
		if err != nil {
			t.Fatal(err)
		}
		ap, err := m.Expose(ctx, l, c, s, "tcp", 5201)
		if err != nil {
			t.Fatal(err)
		}
		rec.Lines = append(rec.Lines, "# "+string(p.pl)+" dials "+ap.String())
	}
	labtest.CompareGolden(t, filepath.Join("testdata", file+".golden"), rec.Text())
}

// Mode is labtest.Mode with mode options: every placement the mode allows,
// tcp_rr and tcp_stream, sane results, nothing left behind.
func Mode(t *testing.T, name string, opts map[string]string) []result.Result {
	t.Helper()
	labtest.NeedRoot(t)
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netmode.Check(m); err != nil {
		t.Skipf("this machine cannot build %s: %v", name, err)
	}
	var cases []runner.Case
	for _, p := range m.Placements() {
		cases = append(cases, runner.Case{Network: name, Placement: p})
	}
	plan := labtest.Plan(t, cases, "tcp_rr", "tcp_stream")
	plan.Lab.ModeOptions = opts
	run := &result.Run{Environment: result.CaptureHost()}
	err = runner.Execute(context.Background(), plan, run)
	labtest.AssertClean(t, plan.Lab.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(cases); len(run.Results) != want {
		t.Fatalf("got %d results, want %d", len(run.Results), want)
	}
	for _, r := range run.Results {
		labtest.CheckSane(t, r)
	}
	return run.Results
}

// SetupError runs mode name's Setup in a recording lab (no root) with the
// given options and returns its error, for option validation tests.
func SetupError(t *testing.T, name string, opts map[string]string) error {
	t.Helper()
	m, err := netmode.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.New(lab.Config{ID: "test", Exec: &lab.Recorder{}, NoStateDirs: true, ModeOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	return m.Setup(context.Background(), l)
}
