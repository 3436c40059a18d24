package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/cli"
)

// commandPaths are every command of the tree, as arguments: groups and
// leaves, so that a new command is covered without being listed here.
func commandPaths() [][]string {
	var out [][]string
	root.Walk(func(c *cli.Command) {
		if c == root {
			return
		}
		out = append(out, strings.Fields(strings.TrimPrefix(c.Path(), "cnperf ")))
	})
	return out
}

// TestEveryCommandHelp: every command and sub-command answers -h, --help
// and `cnperf help PATH` with its usage line, its summary and its flags
// written --flag, on stdout, with exit status 0 and nothing on stderr.
func TestEveryCommandHelp(t *testing.T) {
	bin := cnperf(t)
	paths := commandPaths()
	if len(paths) < 30 {
		t.Fatalf("%d commands in the tree, want every one (run, cluster up, load serve http...)", len(paths))
	}
	for _, p := range append(paths, nil) {
		c := cli.Find(root, p...)
		for _, args := range [][]string{append(append([]string(nil), p...), "-h"), append(append([]string(nil), p...), "--help"), append([]string{"help"}, p...)} {
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := stdout.String()
			switch {
			case err != nil || stderr.Len() > 0:
				t.Errorf("cnperf %s: %v, stderr %q; want exit 0 and the help on stdout", strings.Join(args, " "), err, stderr.String())
			case !strings.HasPrefix(out, "usage: "+c.Path()) || !strings.Contains(out, "\n"+c.Summary+"\n") || !strings.Contains(out, "--"):
				t.Errorf("cnperf %s: help %q; want its usage line, its summary and --flags", strings.Join(args, " "), out)
			case strings.Contains(out, "\n  -") && !strings.Contains(out, "\n  --"):
				t.Errorf("cnperf %s: help writes -flag, not --flag:\n%s", strings.Join(args, " "), out)
			}
		}
	}
}

// TestInterspersedFlags: flags before, between and after the files,
// -flag or --flag, -- ending them, on report and compare, and run's flags
// anywhere (its dry run).
func TestInterspersedFlags(t *testing.T) {
	file := filepath.Join(runFiles, "summaries.json")
	for i, args := range [][]string{
		{"--csv", "DIR", file},
		{file, "--csv", "DIR"},
		{"-csv", "DIR", file},
		{"--csv=DIR", "--", file},
	} {
		dir := filepath.Join(t.TempDir(), "csv"+strconv.Itoa(i))
		for j := range args {
			args[j] = strings.Replace(args[j], "DIR", dir, 1)
		}
		out, err := stdout(t, func() error { return call("report", args) })
		if err != nil {
			t.Fatalf("report %q: %v", args, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) == 0 || !strings.Contains(out, "csv: ") {
			t.Errorf("report %q wrote %d CSV files, output %q", args, len(ents), out)
		}
	}
	for _, args := range [][]string{
		{"--networks", "host", "--dry-run", "--workloads", "tcp_rr"},
		{"--dry-run", "-networks=host", "-workloads", "tcp_rr"},
	} {
		out, err := stdout(t, func() error { return call("run", args) })
		if err != nil || !strings.Contains(out, "host") || !strings.Contains(out, "tcp_rr") {
			t.Errorf("run %q: %v, %q", args, err, out)
		}
	}
	var b bytes.Buffer
	if err := compareArgs([]string{"--json", filepath.Join(t.TempDir(), "c.json"), file, "--allow-undecided", file, "--fail-on-regression=50"}, &b); err != nil {
		t.Errorf("compare with flags around the files: %v", err)
	}
}

// TestVersion: --version and version print the version -ldflags sets,
// the module, the commit line, the Go version and the build settings.
func TestVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cnperf")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	var first string
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("cnperf %v: %v", args, err)
		}
		s := string(out)
		for _, want := range []string{"cnperf 9.8.7-test\n", "\nmodule: github.com/cnperf/cnperf", "\ncommit: ", "\ngo: go1.", "\nbuild: ", "-ldflags=\"-X main.version=9.8.7-test\""} {
			if !strings.Contains("\n"+s, want) {
				t.Errorf("cnperf %v: %q lacks %q", args, s, want)
			}
		}
		if first == "" {
			first = s
		} else if s != first {
			t.Errorf("cnperf %v differs from --version: %q", args, s)
		}
	}
	if err := exec.Command(bin, "version", "--short").Run(); err == nil {
		t.Error("version --short: exit 0, want bad usage")
	}
}

// TestCompletion: `cnperf completion bash` passes bash -n and completes
// the real tree: commands, sub-commands, flags, and the names of
// --networks, --workloads, --suite, --backend; zsh's and fish's are
// checked by their shells and complete the same lines where installed
// (scripts/install-deps.sh installs both).
func TestCompletion(t *testing.T) {
	bin := cnperf(t)
	dir := t.TempDir()
	// the shells installed, each started clean: no user's start-up files,
	// and zsh's compinit writes its dump into the test's folder
	shells := map[string]func(script string) *exec.Cmd{}
	for _, sh := range []string{"zsh", "fish"} {
		if _, err := exec.LookPath(sh); err == nil {
			shells[sh] = func(script string) *exec.Cmd {
				c := exec.Command(sh, "-c", script)
				if sh == "zsh" {
					c = exec.Command(sh, "-f", "-c", script)
				}
				c.Env = append(os.Environ(), "HOME="+dir, "ZDOTDIR="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CACHE_HOME="+dir)
				return c
			}
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, err := exec.Command(bin, "completion", sh).Output()
		if err != nil || len(out) < 1000 {
			t.Fatalf("completion %s: %v (%d bytes)", sh, err, len(out))
		}
		p := filepath.Join(dir, sh)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath(sh); err != nil {
			t.Logf("%s not installed: its script is checked as text only", sh)
			if !bytes.Contains(out, []byte("cnperf")) || (sh == "fish" && !bytes.Contains(out, []byte("complete -c cnperf -n '__cnperf_at cluster' -a up"))) {
				t.Errorf("%s script lacks the tree", sh)
			}
			continue
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v: %s", sh, err, out)
		}
	}
	for line, want := range map[string]string{
		"cnperf ru":                       "run",
		"cnperf cluster s":                "status selftest",
		"cnperf load serve tcp":           "tcp tcp_rr tcp_stream",
		"cnperf image ":                   "build push",
		"cnperf run --netw":               "--networks",
		"cnperf run --networks vx":        "vxlan",
		"cnperf run --networks host,vx":   "host,vxlan",
		"cnperf run --workloads tcp_rr,u": "tcp_rr,udp_rr tcp_rr,udp_stream",
		"cnperf run --suite over":         "overlays",
		"cnperf run --backend docker":     "docker docker-lab",
		"cnperf lab --network host-":      "host-gw",
		"cnperf report x.json --c":        "--csv",
		"cnperf completion ":              "bash zsh fish",
		"cnperf completion z":             "zsh",
	} {
		words := strings.Split(line, " ")
		var q []string
		for _, w := range words {
			q = append(q, "'"+w+"'")
		}
		script := ". " + filepath.Join(dir, "bash") + "; complete -p cnperf >/dev/null || exit 9; COMP_WORDS=(" + strings.Join(q, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + `; _cnperf_complete; echo "${COMPREPLY[*]}"`
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("completing %q: %q (%v), want %q", line, out, err, want)
		}
		// fish completes the line itself (complete -C): the words before a tab
		if sh, ok := shells["fish"]; ok {
			out, err := sh("source " + filepath.Join(dir, "fish") + "; complete -C '" + line + "'").Output()
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if w, _, _ := strings.Cut(l, "\t"); w != "" {
					got = append(got, w)
				}
			}
			if err != nil || sorted(got) != sorted(strings.Fields(want)) {
				t.Errorf("fish completing %q: %q (%v), want %q", line, got, err, want)
			}
		}
		// zsh runs bash's function through bashcompinit and matches what
		// it offers against the word typed itself: do that match here
		if sh, ok := shells["zsh"]; ok {
			out, err := sh("source " + filepath.Join(dir, "zsh") + "; emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=(" + strings.Join(q, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + `; _cnperf_complete; echo "${COMPREPLY[*]}"`).CombinedOutput()
			var got []string
			for _, w := range strings.Fields(string(out)) {
				if strings.HasPrefix(w, words[len(words)-1]) {
					got = append(got, w)
				}
			}
			if err != nil || sorted(got) != sorted(strings.Fields(want)) {
				t.Errorf("zsh completing %q: %q (%v: %s), want %q", line, got, err, out, want)
			}
		}
	}
}

// sorted is words sorted, joined by spaces.
func sorted(words []string) string {
	words = slices.Clone(words)
	slices.Sort(words)
	return strings.Join(words, " ")
}
