package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/exitcode"
	_ "github.com/cnperf/cnperf/internal/experiment/all" // the experiments' options (neighbours, pods)
	"github.com/cnperf/cnperf/internal/option"
	_ "github.com/cnperf/cnperf/internal/workload/all" // the workloads' options (rate)
)

// runLike is a flag set with a flag of every kind run has.
func runLike() *flag.FlagSet {
	fs := flag.NewFlagSet("cnperf run", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	fs.String("suite", "default", "preset")
	fs.String("networks", "", "networks")
	fs.String("workloads", "", "workloads")
	fs.String("out", "", "results")
	fs.Duration("duration", 0, "duration")
	fs.Int("repeat", 0, "rounds")
	fs.Bool("quiet", false, "quiet")
	fs.Bool("dry-run", false, "dry run")
	fs.String("file", "", "file")
	fs.String("neighbours", "", "an experiment's option")
	fs.String("pods", "", "an experiment's option")
	option.FlagVar(fs, "max-rate-search", "a workload switch", true)
	option.FlagVar(fs, "rate", "a workload's option", false)
	option.KeyValues(fs, "mode-opt", "key=value")
	return fs
}

// given are the values of the flags set on fs, as text.
func given(fs *flag.FlagSet) map[string]string { return option.Given(fs, nil) }

func TestParse(t *testing.T) {
	src := `# two scenarios and an empty document
name: first
networks: [vxlan, host-gw]
workloads: tcp_rr,tcp_stream
duration: 2s
repeat: 3
quiet: true
mode-opt: {encrypt: aes-gcm, controlplane: "off"}
max-rate-search: false
neighbours: busy:5
---
# comments only
---
name: second
suite:
  summary: my own
  cases:
    - {network: vxlan, placement: cross-host}
  workloads: [alltoall]
  pods: [2, 4]
  repeat: 2
  quick: {pods: 2}
`
	scs, err := Parse("s.yaml", []byte(src), runLike())
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != 2 || scs[0].Name != "first" || scs[1].Name != "second" || scs[1].Line != 14 {
		t.Fatalf("scenarios %+v", scs)
	}
	fs := runLike()
	if err := scs[0].Apply(fs, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"networks": "vxlan,host-gw", "workloads": "tcp_rr,tcp_stream", "duration": "2s", "repeat": "3",
		"quiet": "true", "mode-opt": "controlplane=off,encrypt=aes-gcm", "max-rate-search": "false", "neighbours": "busy:5"}
	if got := given(fs); !maps.Equal(got, want) {
		t.Errorf("applied %v, want %v", got, want)
	}
	st := scs[1].Suite
	if st == nil || st.Name != "second" || st.Summary != "my own" || len(st.Cases) != 1 || st.Options["pods"] != "2,4" || st.Rounds != 2 {
		t.Fatalf("inline suite %+v", st)
	}
	if q := st.Quick(); q.Options["pods"] != "2" || q.Rounds != 2 || q.Summary != "(quick) my own" {
		t.Errorf("its quick version %+v", q)
	}
	// a flag the command line gives replaces the scenario's value, whole
	fs = runLike()
	if err := scs[0].Apply(fs, map[string]bool{"mode-opt": true, "duration": true}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--mode-opt", "x=1", "--duration", "1s"}); err != nil {
		t.Fatal(err)
	}
	if g := given(fs); g["mode-opt"] != "x=1" || g["duration"] != "1s" || g["networks"] != "vxlan,host-gw" {
		t.Errorf("command line over the scenario: %v", g)
	}
}

// TestParseErrors: every bad file is one line, FILE:LINE: first, naming
// the problem and the fix.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"name: x\nnetwroks: vxlan\n", `s.yaml:2: unknown key "netwroks" in scenario "x" (did you mean "networks"?); the keys are the flags of cnperf run, see cnperf run -h`},
		{"netwroks: vxlan\nname: x\n", `s.yaml:1: unknown key "netwroks" in scenario "x"`},
		{"name: x\nbogus: 1\n", `s.yaml:2: unknown key "bogus" in scenario "x"; the keys`},
		{"name: x\nrepeat: three\n", `s.yaml:2: key "repeat" in scenario "x" wants a whole number, e.g. 3`},
		{"name: x\nrepeat: 2.5\n", `s.yaml:2: key "repeat" in scenario "x" wants a whole number`},
		{"name: x\nquiet: yes\n", `s.yaml:2: key "quiet" in scenario "x" wants true or false`},
		{"name: x\nduration: fast\n", `s.yaml:2: key "duration" in scenario "x" wants a duration, e.g. 5s or 200ms, not "fast"`},
		{"name: x\nduration: 5\n", `s.yaml:2: key "duration" in scenario "x" wants a duration`},
		{"name: x\nnetworks: {a: b}\n", `s.yaml:2: key "networks" in scenario "x" wants a value or a list of values`},
		{"name: x\nnetworks:\n", `s.yaml:2: key "networks" in scenario "x" wants a value or a list of values`},
		{"name: x\nmode-opt: {}\n", `key "mode-opt" in scenario "x" names nothing`},
		{"name: x\nmode-opt: novalue\n", `s.yaml:2: key "mode-opt" in scenario "x": mode option "novalue"; use key=value; see cnperf run -h`},
		{"name: x\ndry-run: true\n", `s.yaml:2: key "dry-run" in scenario "x" is for the command line: give --dry-run to cnperf run -f FILE instead`},
		{"name: x\nnetworks: a\nnetworks: b\n", `s.yaml:3: key "networks" twice in scenario "x"; give it once`},
		{"name: x\n---\nname: x\n", `s.yaml:3: a second scenario "x" (the first at line 1); give each scenario its own name`},
		{"networks: vxlan\n", `s.yaml:1: a scenario without a name; give it one, e.g. name: quick-look`},
		{"name: \"\"\n", `s.yaml:1: the scenario's name is empty; give it one`},
		{"- name: x\n", `s.yaml:1: a scenario is a mapping of keys to values`},
		{"# nothing\n", `s.yaml: no scenario in it; give one`},
		{"name: x\nnetworks: [a,\n", `s.yaml:2: did not find expected node content; fix the YAML (see docs/usage.md, Scenario files)`},
		{"name: x\nsuite: {durtion: 1s}\n", `s.yaml:2: unknown key "durtion" in the suite of scenario "x"; did you mean "duration"?`},
		{"name: x\nsuite:\n  cases: [vxlan]\n", `s.yaml:3: each of scenario "x"'s cases is {network: NAME, placement: same-pod, same-host or cross-host}`},
		{"name: x\nsuite:\n  cases:\n    - {network: vxlan, placement: far}\n", `s.yaml:4: unknown placement "far"; use one of`},
		{"name: x\nsuite:\n  repeat: 0\n", `s.yaml:3: key "repeat" in scenario "x" wants a positive whole number`},
		{"name: x\nsuite:\n  quick: {summary: s}\n", `s.yaml:3: a quick: block has no summary; drop it`},
		{"name: x\nsuite:\n  services: [1, x]\n", `s.yaml:3: key "services" in scenario "x": "x" is not a positive whole number`},
	} {
		_, err := Parse("s.yaml", []byte(c.src), runLike())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.src, err, c.want)
		}
	}
}

// TestDumpReadsBack: the scenario a command line dumps, read back and
// applied, sets the same flags to the same values.
func TestDumpReadsBack(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--networks", "vxlan,host-gw", "--duration", "2s", "--repeat", "3", "--quiet"},
		{"--mode-opt", "encrypt=aes-gcm", "--mode-opt", "x=y", "--max-rate-search", "--rate", "1000,2000"},
		{"--neighbours", "busy:5", "--out", "a b: c.json", "--networks", "null"},
		{"--quiet=false", "--max-rate-search=false", "--workloads", "true"},
	} {
		fs := runLike()
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Dump(&b, "dumped", fs); err != nil {
			t.Fatal(err)
		}
		scs, err := Parse("d.yaml", b.Bytes(), runLike())
		if err != nil {
			t.Fatalf("%q: %v in\n%s", args, err, b.String())
		}
		back := runLike()
		if err := scs[0].Apply(back, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := given(back), given(fs); !maps.Equal(got, want) || scs[0].Name != "dumped" {
			t.Errorf("%q: read back %v, want %v; the dump:\n%s", args, got, want, b.String())
		}
	}
}

func TestWrapPlacesTheError(t *testing.T) {
	scs, err := Parse("s.yaml", []byte("name: x\nnetworks: [vxlan, nope]\nrepeat: 2\n"), runLike())
	if err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]string{
		`unknown network "nope"; use one`:        `s.yaml:2: scenario "x": unknown network "nope"`,
		"--repeat 2: too few":                    "s.yaml:3: ",
		"--repeats is no flag":                   "s.yaml:1: ",
		"the machine is not ready; run it again": "s.yaml:1: ",
	} {
		if got := scs[0].Wrap(errors.New(msg)).Error(); !strings.HasPrefix(got, want) {
			t.Errorf("%q placed as %q, want %q...", msg, got, want)
		}
	}
}

func TestOutcome(t *testing.T) {
	scs := []Scenario{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	cells := exitcode.With(errors.New("2 of 4 measurements failed"), exitcode.CellsFailed)
	for _, c := range []struct {
		errs []error
		code int // 0: nil
		msg  string
	}{
		{[]error{nil, nil, nil}, 0, ""},
		{[]error{nil, cells, nil}, 4, `1 of 3 scenarios did not pass: scenario "b": 2 of 4 measurements failed`},
		{[]error{cells, errors.New("no root"), nil}, 1, `scenario "a": 2 of 4 measurements failed; scenario "b": no root`},
		{[]error{errors.New("no root"), cells}, 1, ""},
		{[]error{exitcode.With(errors.New("x"), exitcode.Usage), cells}, 2, ""},
	} {
		err := Outcome(scs, c.errs)
		var code exitcode.Code
		if errors.As(err, &code); int(code) != c.code || (c.code == 0) != (err == nil) {
			t.Errorf("%v: %v (exit %d), want exit %d", c.errs, err, code, c.code)
		}
		if c.msg != "" && !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%v: %v, want %q", c.errs, err, c.msg)
		}
	}
}

func TestSchemaOfFlags(t *testing.T) {
	s := Schema(runLike())
	props := s["properties"].(map[string]any)
	for _, k := range NotKeys {
		if _, ok := props[k]; ok {
			t.Errorf("the schema takes %q, a command-line flag", k)
		}
	}
	for k, typ := range map[string]string{"quiet": `"type":"boolean"`, "repeat": `"type":"integer"`, "duration": `"$ref":"#/$defs/duration"`,
		"mode-opt": `"type":"object"`, "networks": `"$ref":"#/$defs/text"`, "suite": `"$ref":"#/$defs/suite"`} {
		if b, _ := json.Marshal(props[k]); !strings.Contains(string(b), typ) {
			t.Errorf("%s: %s, want %s", k, b, typ)
		}
	}
	suiteProps := s["$defs"].(map[string]any)["suite"].(map[string]any)["properties"].(map[string]any)
	for _, k := range []string{"cases", "neighbours", "pods", "rate", "max-rate-search", "quick"} {
		if _, ok := suiteProps[k]; !ok {
			t.Errorf("a suite written out has no %q", k)
		}
	}
	if _, ok := suiteProps["out"]; ok {
		t.Errorf("a suite written out takes out:, not an option")
	}
}

// Issue 34 finding 7: Ctrl-C in scenario 2 of 3 said "1 of 3 scenarios
// did not pass", the 3rd, never run, counted as passed.
func TestRunAllInterrupted(t *testing.T) {
	scs := []Scenario{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	err := RunAll(ctx, scs, func(i int) error {
		ran = append(ran, scs[i].Name)
		if i == 1 {
			cancel() // Ctrl-C during b
			return errors.New("interrupted; the lab was torn down")
		}
		return nil
	})
	want := `2 of 3 scenarios did not pass: scenario "b": interrupted; the lab was torn down; scenario "c": not run (interrupted before it)`
	var code exitcode.Code
	if err == nil || err.Error() != want || !errors.As(err, &code) || code != 1 {
		t.Errorf("RunAll: %v (exit %d), want %q (exit 1)", err, code, want)
	}
	if strings.Join(ran, ",") != "a,b" {
		t.Errorf("ran %v, want a and b", ran)
	}
}
