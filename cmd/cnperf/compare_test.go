package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// compareFiles writes an old and a new run: tcp_rr over baseline, bridge
// and one network of each's own, 5 rounds; bridge's rate in the new one is
// scaled by bridgeNew (and its p99 by its inverse).
func compareFiles(t *testing.T, dir string, bridgeNew float64) (oldPath, newPath string) {
	t.Helper()
	noise := []float64{1, 1.02, 0.98, 1.01, 0.99}
	mk := func(scale float64, extra string) *result.Run {
		r := &result.Run{Schema: result.Schema, Version: "test", Rounds: len(noise)}
		for i, d := range noise {
			for _, n := range []struct {
				name      string
				tps, p99  float64
				bridgeish bool
			}{{"baseline", 90000, 14, false}, {"bridge", 80000, 18, true}, {extra, 60000, 30, false}} {
				s := 1.0
				if n.bridgeish {
					s = scale
				}
				r.Results = append(r.Results, result.Result{Network: n.name, Workload: "tcp_rr", Placement: "same-host", Round: i + 1,
					Metrics: result.Metrics{TransactionsPerS: result.F(n.tps * s * d), LatencyUs: map[string]float64{"p99": n.p99 / s / d}}})
			}
		}
		stats.Summarize(r, nil)
		return r
	}
	oldPath, newPath = filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	if err := mk(1, "host").Write(oldPath); err != nil {
		t.Fatal(err)
	}
	if err := mk(bridgeNew, "vxlan").Write(newPath); err != nil {
		t.Fatal(err)
	}
	return oldPath, newPath
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath := compareFiles(t, dir, 0.8)
	notJSON := filepath.Join(dir, "notes.txt")
	otherJSON := filepath.Join(dir, "other.json")
	os.WriteFile(notJSON, []byte("hello\n"), 0o644)
	os.WriteFile(otherJSON, []byte(`{"name": "something else"}`), 0o644)
	out := filepath.Join(dir, "cmp.json")
	cases := []struct {
		name    string
		args    []string
		out     []string // substrings of the output
		err     string   // substring of the error, "" for none
		exit    int      // the exit status the error carries (0: none)
		help    bool
		jsonOut bool
	}{
		{name: "table", args: []string{oldPath, newPath},
			out: []string{"bridge same-host tcp_rr", "trans/s", "0.80x", "differs: worse", "p99 us", "1.25x",
				"baseline same-host tcp_rr  trans/s", "equivalent (within ±5 %)", "only in old: host same-host tcp_rr", "only in new: vxlan same-host tcp_rr",
				"new/old is the ratio of the geometric means of each run's rounds, not the quotient of the medians shown"}},
		{name: "regression beyond 10 %", args: []string{oldPath, newPath, "--fail-on-regression", "10"},
			out: []string{"gate: 2 pass, 2 regression, 1 undecided", "undecided: host same-host tcp_rr: not tested: measured in the old run only"},
			err: "2 regression(s) beyond 10 %: bridge same-host tcp_rr trans/s 0.80x [0.78, 0.82]: the whole interval below 0.90", exit: 3},
		{name: "flags first, PCT with a % sign, not beyond 30 %: the cell only in old is undecided", args: []string{"--fail-on-regression", "30%", oldPath, newPath},
			out: []string{"differs: worse"}, err: "the gate at 30 % could not decide: 1 change(s) undecided or untested, in 1 cell(s): host same-host tcp_rr; rerun both", exit: 5},
		{name: "undecided allowed", args: []string{"--fail-on-regression", "30", "--allow-undecided", oldPath, newPath}, out: []string{"gate: 4 pass, 0 regression, 1 undecided"}},
		{name: "json", args: []string{oldPath, "--json", out, newPath}, out: []string{"differs: worse"}, jsonOut: true},
		{name: "help", args: []string{"-h"}, out: []string{"usage: cnperf compare OLD.json NEW.json", "-fail-on-regression PCT", "-allow-undecided", "-junit FILE"}, help: true},
		{name: "one file", args: []string{oldPath}, err: "want two results files, got 1: cnperf compare OLD.json NEW.json", exit: 2},
		{name: "missing file", args: []string{oldPath, filepath.Join(dir, "nope.json")}, err: "nope.json: no such file; name two results files written by `cnperf run`"},
		{name: "not JSON", args: []string{notJSON, newPath}, err: "not a cnperf result"},
		{name: "not a cnperf file", args: []string{oldPath, otherJSON}, err: "compare takes results files written by `cnperf run`"},
		{name: "bad PCT", args: []string{oldPath, newPath, "--fail-on-regression", "ten"}, err: `--fail-on-regression "ten": want a percentage from 0 to below 100`, exit: 2},
		{name: "negative PCT", args: []string{oldPath, newPath, "--fail-on-regression", "-5"}, err: "want a percentage", exit: 2},
		{name: "junit without a limit", args: []string{oldPath, newPath, "--junit", filepath.Join(dir, "j.xml")}, err: "--junit and --allow-undecided go with --fail-on-regression PCT", exit: 2},
		{name: "unknown flag", args: []string{oldPath, newPath, "--pct", "5"}, err: "unknown flag --pct; see `cnperf compare --help`", exit: 2},
		// refused before the comparison is printed, as usage
		{name: "unwritable json", args: []string{oldPath, newPath, "--json", filepath.Join(dir, "no", "such", "dir.json")}, err: "such does not exist; create it first", exit: 2},
		{name: "junit under /proc", args: []string{oldPath, newPath, "--fail-on-regression", "10", "--junit", "/proc/gate.xml"}, err: "--junit /proc/gate.xml: cannot write under /proc", exit: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := compareArgs(c.args, &buf)
			switch {
			case c.help:
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err %v, want flag.ErrHelp", err)
				}
			case c.err == "":
				if err != nil {
					t.Fatalf("err %v", err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %q, want one line containing %q", err, c.err)
				}
				if c.exit == 2 && buf.Len() > 0 {
					t.Errorf("a usage error printed %d bytes before failing", buf.Len())
				}
				var ec exitCode
				errors.As(err, &ec)
				if int(ec) != c.exit {
					t.Fatalf("exit %d, want %d (%v)", ec, c.exit, err)
				}
			}
			for _, s := range c.out {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, buf.String())
				}
			}
			if c.jsonOut {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				var rc stats.RunComparison
				if err := json.Unmarshal(b, &rc); err != nil || rc.Schema != stats.CompareSchema || len(rc.Changes) == 0 || rc.Old != oldPath {
					t.Fatalf("json %v: %s", err, b)
				}
			}
		})
	}
}

// TestCompareExitStatus runs the binary: a regression exits 3, a gate that
// cannot decide 5, bad usage 2, an unreadable file 1, each with one line
// on stderr; -h exits 0.
func TestCompareExitStatus(t *testing.T) {
	bin := cnperf(t)
	oldPath, newPath := compareFiles(t, t.TempDir(), 0.8)
	cases := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"compare", oldPath, newPath, "--fail-on-regression", "10"}, 3, "cnperf compare: 2 regression(s) beyond 10 %"},
		{[]string{"compare", oldPath, newPath, "--fail-on-regression", "50"}, 5, "cnperf compare: the gate at 50 % could not decide"},
		{[]string{"compare", oldPath, newPath, "--fail-on-regression", "50", "--allow-undecided"}, 0, ""},
		{[]string{"compare", "-h"}, 0, ""},
		{[]string{"compare", oldPath}, 2, "cnperf compare: want two results files"},
		{[]string{"compare", oldPath, "/nonexistent.json"}, 1, "cnperf compare: /nonexistent.json: no such file"},
	}
	for _, c := range cases {
		cmd := exec.Command(bin, c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		status := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := strings.TrimSpace(stderr.String())
		if status != c.status || !strings.HasPrefix(msg, c.stderr) || strings.Contains(msg, "\n") {
			t.Errorf("%v: status %d stderr %q, want %d and one line starting %q", c.args[1:], status, msg, c.status, c.stderr)
		}
	}
}

// TestCompareOneRoundGate: on one-round files (a stored one: seed 000's
// latency suite, one round) the gate cannot pass what it never tested:
// exit 5, with a line naming every undecided cell; --allow-undecided
// passes it.
func TestCompareOneRoundGate(t *testing.T) {
	f := filepath.Join("..", "..", "internal", "report", "testdata", "seed_latency.json")
	var buf bytes.Buffer
	err := compareArgs([]string{f, f, "--fail-on-regression", "10"}, &buf)
	var ec exitCode
	if !errors.As(err, &ec) || ec != exitcode.Undecided {
		t.Fatalf("err %v, want exit 5", err)
	}
	msg := err.Error()
	for _, want := range []string{"could not decide", "undecided or untested, in 24 cell(s): ", "host-gw cross-host http_rate load=20% of max size=4096;", "vxlan cross-host http_rate load=60% of max size=350;", "a noisy or busy machine"} {
		if !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
			t.Errorf("error %q: want one line naming %q", msg, want)
		}
	}
	if !strings.Contains(buf.String(), "undecided: one round, no test") || !strings.Contains(buf.String(), "not tested: 1 and 1 round(s), no interval") {
		t.Errorf("output does not say why:\n%s", buf.String())
	}
	buf.Reset()
	if err := compareArgs([]string{f, f, "--fail-on-regression", "10", "--allow-undecided"}, &buf); err != nil {
		t.Errorf("--allow-undecided: %v", err)
	}
}

// The JUnit XML schema as CI systems read it (Jenkins' and Ant's
// junit-4.xsd): testsuites > testsuite > testcase, each with at most one
// failure, error or skipped. Declared here apart from the writer's types,
// so that the test reads the file as a JUnit consumer would.
type xunitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Tests   int          `xml:"tests,attr"`
	Suites  []xunitSuite `xml:"testsuite"`
}

type xunitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []xunitCase `xml:"testcase"`
}

type xunitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
}

// TestCompareJUnit: --junit writes one test case per cell and figure (and
// one for the machine), regressions and undecided changes as failures, or
// undecided ones skipped with --allow-undecided; the counts add up.
func TestCompareJUnit(t *testing.T) {
	dir := t.TempDir()
	oldPath, newPath := compareFiles(t, dir, 0.8)
	for _, allow := range []bool{false, true} {
		path := filepath.Join(dir, "junit.xml")
		args := []string{oldPath, newPath, "--fail-on-regression", "10", "--junit", path}
		if allow {
			args = append(args, "--allow-undecided")
		}
		if err := compareArgs(args, io.Discard); err == nil {
			t.Fatal("a regression passed")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc xunitSuites
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("not JUnit XML: %v\n%s", err, b)
		}
		if len(doc.Suites) != 1 {
			t.Fatalf("%d suites", len(doc.Suites))
		}
		s := doc.Suites[0]
		// baseline, bridge: trans/s and p99 each; host: only in old; the machine
		byName := map[string]xunitCase{}
		failures, skipped := 0, 0
		for _, c := range s.Cases {
			byName[c.Name] = c
			if c.Name == "" || c.Classname == "" {
				t.Errorf("a test case without a name or class: %+v", c)
			}
			if c.Failure != nil {
				failures++
			}
			if c.Skipped != nil {
				skipped++
			}
		}
		if s.Tests != 6 || len(s.Cases) != 6 || doc.Tests != 6 || s.Failures != failures || s.Skipped != skipped {
			t.Errorf("counts: tests %d (%d cases, %d total), failures %d (%d), skipped %d (%d)", s.Tests, len(s.Cases), doc.Tests, s.Failures, failures, s.Skipped, skipped)
		}
		for _, name := range []string{"bridge same-host tcp_rr trans/s", "bridge same-host tcp_rr p99 us"} {
			if c := byName[name]; c.Failure == nil || c.Failure.Type != "regression" || !strings.Contains(c.Failure.Message, "the whole interval") {
				t.Errorf("%s: %+v, want a regression failure", name, c)
			}
		}
		if c := byName["baseline same-host tcp_rr trans/s"]; c.Failure != nil || c.Skipped != nil {
			t.Errorf("an unchanged figure failed: %+v", c)
		}
		host := byName["host same-host tcp_rr"]
		if allow && (host.Skipped == nil || host.Failure != nil) || !allow && (host.Failure == nil || host.Failure.Type != "undecided") {
			t.Errorf("allow-undecided %v: the cell only in old is %+v", allow, host)
		}
		if _, ok := byName["machine: noise and load"]; !ok {
			t.Error("no test case for the machine")
		}
	}
}

// TestCompareStoredRuns: two stored runs of the same tcp_rr cells two days
// apart (docs/examples/default.json, recommend-latency.json): the verdicts
// are what their intervals show (the p50s differ, better; the rates are
// undecided), and the gate at 10 % cannot decide: the rates' intervals
// reach past the limit, the streams were measured in the old run only,
// and both runs warned of a noisy and busy machine.
func TestCompareStoredRuns(t *testing.T) {
	old := filepath.Join("..", "..", "docs", "examples", "default.json")
	newer := filepath.Join("..", "..", "docs", "examples", "recommend-latency.json")
	var buf bytes.Buffer
	err := compareArgs([]string{old, newer, "--fail-on-regression", "10"}, &buf)
	var ec exitCode
	if !errors.As(err, &ec) || ec != exitcode.Undecided {
		t.Fatalf("err %v, want exit 5", err)
	}
	out := buf.String()
	for _, want := range []string{
		"baseline cross-host tcp_rr  p50 us   20.2 (3)        17.1 (3)        0.83x                 0.79..0.88    0.001   differs: better",
		"host cross-host tcp_rr      trans/s  37.3k (3)       45.8k (3)       1.28x                 0.67..2.46    0.345   undecided: not shown (~17 rounds)",
		"undecided: host-gw cross-host tcp_stream: not tested: measured in the old run only",
		"undecided: the machine: the old run warned of a noisy machine (above)",
		"undecided: the machine: the new run warned of a busy machine (above)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(err.Error(), "in 14 cell(s): baseline same-host tcp_rr; ") {
		t.Errorf("error %q does not name the undecided cells", err)
	}
}

// TestGateNothingCompared: a gate that judged nothing fails closed (issue
// 35 item 4). An old file whose cells all failed against a good new one
// exited 0 with no "gate:" line and a JUnit file of one passing case;
// now exit 5, "gate: nothing compared", and a failing JUnit case, with
// --allow-undecided too. A new file whose cells all failed says so,
// not "measured in the old run only".
func TestGateNothingCompared(t *testing.T) {
	failed := filepath.Join("testdata", "verdicts", "gate-all-failed.json")
	good := filepath.Join("testdata", "verdicts", "gate-good.json")
	for _, c := range []struct {
		name     string
		old, new string
		allow    bool
		out      string
	}{
		{"old all failed", failed, good, false, "failed in every round of the old run: bridge same-host tcp_rr"},
		{"old all failed, undecided allowed", failed, good, true, "gate: nothing compared"},
		{"new all failed", good, failed, false, "failed in every round of the new run: bridge same-host tcp_rr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "gate.xml")
			args := []string{c.old, c.new, "--fail-on-regression", "10", "--junit", junit}
			if c.allow {
				args = append(args, "--allow-undecided")
			}
			var buf bytes.Buffer
			err := compareArgs(args, &buf)
			var ec exitCode
			if !errors.As(err, &ec) || ec != exitcode.Undecided || !strings.Contains(err.Error(), "compared nothing") {
				t.Fatalf("err %v, want exit 5 saying the gate compared nothing", err)
			}
			for _, want := range []string{"gate: nothing compared", c.out} {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, buf.String())
				}
			}
			if strings.Contains(buf.String(), "measured in the old run only") {
				t.Errorf("a cell that failed in the new run is called measured in the old run only:\n%s", buf.String())
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `<testcase name="gate: nothing compared"`) || !strings.Contains(string(b), `<failure message="nothing compared`) {
				t.Errorf("junit has no failing nothing-compared case:\n%s", b)
			}
		})
	}
}
