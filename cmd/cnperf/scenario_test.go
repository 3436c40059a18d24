package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/golden"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/runner"
	"github.com/cnperf/cnperf/internal/scenario"
	"github.com/cnperf/cnperf/internal/suite"
)

const scenarioSchema = "../../docs/scenario.schema.json"

// filePlans plans the scenarios of a file as `cnperf run -f FILE ARGS...`
// does, the lab's random id blanked.
func filePlans(t *testing.T, path string, args ...string) []plan.Plan {
	t.Helper()
	args = append([]string{"-f", path}, args...)
	f := newRunFlags(nil)
	if err := parseRunFlags(f.fs, args); err != nil {
		t.Fatal(err)
	}
	_, setups, err := prepareScenarios(path, f.fs, args)
	if err != nil {
		t.Fatalf("%s %q: %v", path, args, err)
	}
	var out []plan.Plan
	for _, s := range setups {
		out = append(out, blankID(s.plan))
	}
	return out
}

func blankID(p plan.Plan) plan.Plan { p.Lab.ID = ""; return p }

// flagPlan plans a command line, the lab's id blanked.
func flagPlan(t *testing.T, args ...string) plan.Plan {
	t.Helper()
	s, err := parseRunArgs(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return blankID(s.plan)
}

func dryRunText(t *testing.T, p plan.Plan) string {
	var b bytes.Buffer
	if err := runner.DryRun(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestScenarioSuites: every built-in suite's file, as `cnperf suites --show
// NAME` prints it, run with -f gives the plan --suite NAME gives, and with
// --quick the plan of --suite NAME --quick.
func TestScenarioSuites(t *testing.T) {
	dir := t.TempDir()
	names := suite.Names()
	if len(names) < 11 {
		t.Fatalf("%d suites", len(names))
	}
	for _, name := range names {
		out, err := stdout(t, func() error { return call("suites", []string{"--show", name}) })
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, quick := range [][]string{nil, {"--quick"}} {
			want := flagPlan(t, append([]string{"--suite", name}, quick...)...)
			got := filePlans(t, path, quick...)
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("%s %v: the file's plan\n%#v\nwant --suite's\n%#v", name, quick, got, want)
				continue
			}
			if g, w := dryRunText(t, got[0]), dryRunText(t, want); g != w {
				t.Errorf("%s %v: dry run\n%s\nwant\n%s", name, quick, g, w)
			}
		}
	}
}

// TestDumpScenario: the scenario --dump-scenario writes, run with -f,
// gives the plan of the command line it was dumped from.
func TestDumpScenario(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{
		nil,
		{"--suite", "sizes", "--quick"},
		{"--networks", "vxlan,host-gw", "--workloads", "tcp_rr,tcp_stream", "--duration", "2s", "--repeat", "2", "--placement", "cross-host"},
		{"--networks", "weave", "--workloads", "tcp_rr", "--mode-opt", "encrypt=aes-gcm", "--no-baseline", "--pin", "0,1", "--mtu", "9000"},
		{"--networks", "host", "--workloads", "http_rate", "--rate", "1000,2000", "--max-rate-search=false", "--server", "builtin", "--tuning", "none,study"},
		{"--networks", "vxlan", "--workloads", "tcp_rr,tcp_stream", "--neighbours", "busy:5", "--message-size", "1024", "--out", filepath.Join(dir, "r.json"), "--quiet"},
		{"--networks", "host-gw", "--lb", "none,iptables", "--services", "1,100", "--cpu-latency", "off"},
		{"--suite", "seed-latency", "--quick", "--response-size", "4096"},
		{"--networks", "host-gw", "--workloads", "tcp_stream", "--message-size", "64,1024", "--direction", "down", "--html", filepath.Join(dir, "r.html")},
	} {
		out, err := stdout(t, func() error { return call("run", append(append([]string(nil), args...), "--dump-scenario")) })
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		path := filepath.Join(dir, "dump"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		want, got := flagPlan(t, args...), filePlans(t, path)
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%q: the dump\n%s\nplans\n%#v\nwant\n%#v", args, out, got, want)
		}
	}
}

// TestScenarioFile: -f runs every scenario of a file, in order; a flag
// given with it replaces every scenario's value (a repeatable one whole);
// --dry-run prints each one's plan and writes nothing.
func TestScenarioFile(t *testing.T) {
	unknownKey, _ := filepath.Abs("testdata/scenario_unknown_key.yaml")
	badNetwork, _ := filepath.Abs("testdata/scenario_bad_network.yaml")
	t.Chdir(t.TempDir())
	src := `name: a
networks: [vxlan, host-gw]
workloads: tcp_rr
duration: 2s
repeat: 2
---
name: b
networks: weave
workloads: [tcp_rr, tcp_stream]
mode-opt: {encrypt: aes-gcm}
no-baseline: true
`
	if err := os.WriteFile("s.yaml", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := filePlans(t, "s.yaml")
	if len(ps) != 2 || ps[0].Params.Duration != 2*time.Second || ps[0].Repeat != 2 || len(ps[0].Cases) != 3 || len(ps[1].Cases) != 1 || ps[1].Lab.ModeOptions["encrypt"] != "aes-gcm" {
		t.Fatalf("plans %+v", ps)
	}
	if want := flagPlan(t, "--networks", "weave", "--workloads", "tcp_rr,tcp_stream", "--mode-opt", "encrypt=aes-gcm", "--no-baseline"); !reflect.DeepEqual(ps[1], want) {
		t.Errorf("scenario b plans\n%#v\nwant\n%#v", ps[1], want)
	}
	over := filePlans(t, "s.yaml", "--duration", "1s", "--networks", "weave", "--mode-opt", "underlay=routed")
	if over[0].Params.Duration != time.Second || over[1].Params.Duration != time.Second || over[0].Cases[len(over[0].Cases)-1].Network != "weave" ||
		!reflect.DeepEqual(over[1].Lab.ModeOptions, map[string]string{"underlay": "routed"}) {
		t.Errorf("the command line does not override: %+v", over)
	}
	out, err := stdout(t, func() error { return call("run", []string{"-f", "s.yaml", "--dry-run"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# scenario \"a\" (s.yaml:1)\nbaseline: cross-host tcp_rr\n", "# scenario \"b\" (s.yaml:7)\nweave: cross-host tcp_rr, cross-host tcp_stream\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("want %q in\n%s", w, out)
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 1 {
		t.Errorf("--dry-run -f wrote %d files", len(ents)-1)
	}
	// a usage error in any scenario stops them all before any runs: exit 2
	bad := src + "---\nname: c\nnetworks: nope\n"
	os.WriteFile("bad.yaml", []byte(bad), 0o644)
	os.WriteFile("badout.yaml", []byte("name: a\nnetworks: host\n---\nname: b\nnetworks: host\nout: /nonexistent/dir/r.json\n"), 0o644)
	os.WriteFile("same.yaml", []byte("name: a\nout: r.json\nnetworks: host\n---\nname: b\nout: r.json\nnetworks: host\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "bad.yaml"}, `bad.yaml:14: scenario "c": unknown network "nope"`},
		{[]string{"--file", "same.yaml"}, `same.yaml:6: scenario "b": --out r.json is scenario "a"'s too; give each scenario its own out:`},
		{[]string{"-f", "s.yaml", "--out", "x.json"}, `--out x.json is scenario "a"'s too`},
		{[]string{"-f", "badout.yaml"}, `badout.yaml:6: scenario "b": --out /nonexistent/dir/r.json: folder /nonexistent/dir does not exist; create it first`},
		{[]string{"-f", "s.yaml", "--dump-scenario"}, "drop one of them"},
		{[]string{"-f", "none.yaml"}, "-f none.yaml: no such file; name a scenario file"},
		{[]string{"-f", "s.yaml", "--networks", "nope"}, `s.yaml:1: scenario "a": unknown network "nope"`},
		{[]string{"-f", unknownKey}, `scenario_unknown_key.yaml:3: unknown key "netwroks" in scenario "typo" (did you mean "networks"?)`},
		{[]string{"-f", badNetwork}, `scenario_bad_network.yaml:5: scenario "bad-network": unknown network "nope"`},
	} {
		err := call("run", c.args)
		var code exitcode.Code
		if err == nil || !errors.As(err, &code) || code != exitcode.Usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (exit %d), want exit 2 and %q", c.args, err, code, c.want)
		}
	}
	if _, err := os.Stat("cnperf-results"); err == nil {
		t.Errorf("a refused file made the results folder")
	}
}

// TestScenarioSchema: docs/scenario.schema.json is the one run's flags
// give (go test ./cmd/cnperf -run TestScenarioSchema -update rewrites it).
func TestScenarioSchema(t *testing.T) {
	b, err := json.MarshalIndent(scenario.Schema(newRunFlags(nil).fs), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, scenarioSchema, string(b)+"\n")
}

// yamlDocs are the YAML documents of a file, as JSON values for the
// validator.
func yamlDocs(t *testing.T, name string, b []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []any
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("%s: %v", name, err)
		}
		if v == nil {
			continue
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, doc)
	}
}

// yamlBlock is a YAML block of a doc that is a scenario file.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestScenarioSchemaValidates: every built-in suite's file, every scenario
// file under docs/examples and every scenario in docs/usage.md is valid
// against the schema and plans; a misspelt key or a wrong type is not
// valid.
func TestScenarioSchemaValidates(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(scenarioSchema)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range suite.Names() {
		b, err := suite.File(n)
		if err != nil {
			t.Fatal(err)
		}
		files["suite "+n] = b
	}
	examples, _ := filepath.Glob("../../docs/examples/*.yaml")
	for _, p := range examples {
		b, _ := os.ReadFile(p)
		files[p] = b
	}
	usage, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := yamlBlock.FindAllSubmatch(usage, -1)
	for i, m := range blocks {
		files["docs/usage.md block "+string(rune('1'+i))] = m[1]
	}
	if len(examples) == 0 || len(blocks) == 0 {
		t.Errorf("%d scenario files in docs/examples, %d yaml blocks in docs/usage.md: want some of each", len(examples), len(blocks))
	}
	dir := t.TempDir()
	for name, b := range files {
		docs := yamlDocs(t, name, b)
		if len(docs) == 0 {
			t.Errorf("%s: no scenario", name)
		}
		for _, d := range docs {
			if err := sch.Validate(d); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		path := filepath.Join(dir, "f.yaml")
		os.WriteFile(path, b, 0o644)
		if ps := filePlans(t, path); len(ps) != len(docs) {
			t.Errorf("%s: %d plans of %d scenarios", name, len(ps), len(docs))
		}
	}
	for _, bad := range []string{
		"networks: vxlan\n",                  // no name
		"name: x\nnetwroks: vxlan\n",         // a misspelt key
		"name: x\nrepeat: three\n",           // not a number
		"name: x\nquiet: 1\n",                // not a bool
		"name: x\nduration: fast\n",          // not a duration
		"name: x\nfile: y.yaml\n",            // the command line's
		"name: x\nsuite: {durtion: 1s}\n",    // a misspelt key of a suite
		"name: x\nsuite: {cases: [vxlan]}\n", // a case is a mapping
		"name: x\nnetworks: {a: b}\n",        // a mapping for a list
	} {
		if err := sch.Validate(yamlDocs(t, bad, []byte(bad))[0]); err == nil {
			t.Errorf("%q is valid", bad)
		}
	}
}

// TestScenarioFileRuns runs a file of two scenarios for real on the lab:
// each writes its own results file, which records the command line and
// which scenario of which file it was, and the lab is gone afterwards.
func TestScenarioFileRuns(t *testing.T) {
	labtest.NeedRoot(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "two.yaml")
	text := "name: first\nnetworks: host\nplacement: same-host\nworkloads: tcp_rr\nduration: 1s\nrepeat: 1\nno-baseline: true\nout: " + filepath.Join(dir, "a.json") +
		"\n---\n# the second\nname: second\nnetworks: bridge\nplacement: same-host\nworkloads: tcp_rr\nduration: 1s\nrepeat: 1\nno-baseline: true\nout: " + filepath.Join(dir, "b.json") + "\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	id := "scf" + lab.NewID()[:6]
	cmd := exec.Command(cnperf(t), "run", "-f", file, "--quiet")
	cmd.Env = append(os.Environ(), "CNPERF_RUN_ID="+id)
	t.Cleanup(func() { _, _ = exec.Command(cnperf(t), "clean", "--id", id, "--force").CombinedOutput() })
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cnperf run -f: %v\n%s", err, out)
	}
	for _, c := range []struct {
		out, name, network string
		line               int
	}{{"a.json", "first", "host", 1}, {"b.json", "second", "bridge", 11}} {
		run, err := result.Read(filepath.Join(dir, c.out))
		if err != nil {
			t.Fatal(err)
		}
		if s := run.Scenario; s == nil || s.Name != c.name || s.File != file || s.Line != c.line {
			t.Errorf("%s: scenario %+v, want %s at %s:%d", c.out, s, c.name, file, c.line)
		}
		if len(run.Results) == 0 || run.Results[0].Network != c.network {
			t.Errorf("%s: results %+v, want %s", c.out, run.Results, c.network)
		}
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), id) {
		t.Errorf("the lab's namespaces are left: %s", out)
	}
}
