package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
		exit3   bool
		help    bool
		jsonOut bool
	}{
		{name: "table", args: []string{oldPath, newPath},
			out: []string{"bridge same-host tcp_rr", "trans/s", "0.80x", "worse", "p99 us", "1.25x",
				"baseline same-host tcp_rr  trans/s", "no significant change", "only in old: host same-host tcp_rr", "only in new: vxlan same-host tcp_rr"}},
		{name: "regression beyond 10 %", args: []string{oldPath, newPath, "--fail-on-regression", "10"},
			out: []string{"worse"}, err: "2 figure(s) significantly worse by more than 10 %: bridge same-host tcp_rr trans/s 0.80x", exit3: true},
		{name: "flags first, PCT with a % sign, not beyond 30 %", args: []string{"--fail-on-regression", "30%", oldPath, newPath}, out: []string{"worse"}},
		{name: "json", args: []string{oldPath, "--json", out, newPath}, out: []string{"worse"}, jsonOut: true},
		{name: "help", args: []string{"-h"}, out: []string{"usage: cnperf compare OLD.json NEW.json", "-fail-on-regression PCT"}, help: true},
		{name: "one file", args: []string{oldPath}, err: "want two results files, got 1: cnperf compare OLD.json NEW.json"},
		{name: "missing file", args: []string{oldPath, filepath.Join(dir, "nope.json")}, err: "nope.json: no such file; name two results files written by `cnperf run`"},
		{name: "not JSON", args: []string{notJSON, newPath}, err: "not a cnperf result"},
		{name: "not a cnperf file", args: []string{oldPath, otherJSON}, err: "compare takes results files written by `cnperf run`"},
		{name: "bad PCT", args: []string{oldPath, newPath, "--fail-on-regression", "ten"}, err: `--fail-on-regression "ten": want a percentage from 0 to 1000`},
		{name: "negative PCT", args: []string{oldPath, newPath, "--fail-on-regression", "-5"}, err: "want a percentage"},
		{name: "unknown flag", args: []string{oldPath, newPath, "--pct", "5"}, err: "see `cnperf compare -h`"},
		{name: "unwritable json", args: []string{oldPath, newPath, "--json", filepath.Join(dir, "no", "such", "dir.json")}, err: "--json:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := compareMain(c.args, &buf)
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
				var ec exitCode
				if got := errors.As(err, &ec) && ec == 3; got != c.exit3 {
					t.Fatalf("exit 3: %v, want %v (%v)", got, c.exit3, err)
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

// TestCompareExitStatus runs the binary: a regression exits 3 with one
// line on stderr, -h exits 0.
func TestCompareExitStatus(t *testing.T) {
	bin := cnperf(t)
	oldPath, newPath := compareFiles(t, t.TempDir(), 0.8)
	cases := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"compare", oldPath, newPath, "--fail-on-regression", "10"}, 3, "cnperf compare: 2 figure(s) significantly worse"},
		{[]string{"compare", oldPath, newPath, "--fail-on-regression", "50"}, 0, ""},
		{[]string{"compare", "-h"}, 0, ""},
		{[]string{"compare", oldPath}, 1, "cnperf compare: want two results files"},
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
