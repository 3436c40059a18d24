package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/exitcode"
)

// toy is a small tree: a leaf with flags and arguments, a group.
func toy(got *[]string, dur *time.Duration) *Command {
	return &Command{Name: "tool", Summary: "a tool", Subs: []*Command{
		{Name: "report", Args: "FILE...", Summary: "print files", Run: func(c *Ctx) error {
			fs := c.Flags()
			csv := fs.String("csv", "", "write CSV into `DIR`")
			fs.DurationVar(dur, "duration", 5*time.Second, "how long")
			v := fs.Bool("v", false, "verbose")
			args, err := c.Parse()
			if err != nil {
				return err
			}
			*got = append([]string{"csv=" + *csv, "v=" + map[bool]string{true: "1", false: "0"}[*v]}, args...)
			return nil
		}},
		{Name: "cluster", Summary: "a cluster", Subs: []*Command{
			{Name: "status", Summary: "its status", Run: func(c *Ctx) error { _, err := c.Parse(); return err }},
			{Name: "up", Summary: "start it", Run: func(c *Ctx) error { _, err := c.Parse(); return err }},
		}},
	}}
}

func TestInterspersed(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--csv", "out", "a.json"}, "csv=out v=0 a.json"},
		{[]string{"report", "a.json", "--csv", "out", "b.json"}, "csv=out v=0 a.json b.json"},
		{[]string{"report", "a.json", "-csv=out", "-v"}, "csv=out v=1 a.json"},
		{[]string{"report", "--v=false", "a.json", "--", "--csv", "-v"}, "csv= v=0 a.json --csv -v"},
		{[]string{"report", "-", "--csv", "-x"}, "csv=-x v=0 -"}, // a value may start with -
	} {
		var got []string
		var d time.Duration
		if err := Execute(toy(&got, &d), c.args, &bytes.Buffer{}); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%q: got %q, want %q", c.args, strings.Join(got, " "), c.want)
		}
	}
}

func TestBadUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--duration", "5"}, "--duration 5: a duration needs its unit: write 5s"},
		{[]string{"report", "--duration", "1.5"}, "write 1.5s"},
		{[]string{"report", "--duration", "fast"}, `--duration "fast": want a duration such as 5s`},
		{[]string{"report", "--v=maybe"}, `--v "maybe": want true or false`},
		{[]string{"report", "--cvs", "x"}, `unknown flag --cvs; did you mean "--csv"? see ` + "`tool report --help`"},
		{[]string{"report", "--csv"}, "--csv needs a value (DIR)"},
		{[]string{"report", "---csv", "x"}, "bad flag syntax"},
		{[]string{"report", "--csv", "out\nx"}, `--csv "out\nx": a value is one line; remove its line breaks`},
		{[]string{"cluster", "stauts"}, `unknown cluster command "stauts"; did you mean "status"? use one of status, up`},
		{[]string{"cluster", "frob"}, `unknown cluster command "frob"; use one of status, up`},
		{[]string{"cluster", "up", "now"}, `unexpected argument "now"`},
		{[]string{"cluster"}, "name a command: status, up"},
		{[]string{"reprot"}, `unknown command "reprot"; did you mean "report"?`},
		{nil, "name a command: report, cluster"},
	} {
		var got []string
		var d time.Duration
		err := Execute(toy(&got, &d), c.args, &bytes.Buffer{})
		var ec exitcode.Code
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ec) || ec != exitcode.Usage {
			t.Errorf("%q: %v, want bad usage (exit 2) saying %q", c.args, err, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"report", "-h"}, {"report", "--help"}, {"report", "x", "--help"}, {"help", "report"}, {"cluster", "up", "-h"}, {"help", "cluster", "up"}, {"cluster", "help"}, {"-h"}, {"help"}, {"cluster", "up", "help"}} {
		var got []string
		var d time.Duration
		var out bytes.Buffer
		err := Execute(toy(&got, &d), args, &out)
		if !errors.Is(err, flag.ErrHelp) || !strings.HasPrefix(out.String(), "usage: tool") || !strings.Contains(out.String(), "--") {
			t.Errorf("%q: %v, output %q; want the help", args, err, out.String())
		}
		if got != nil {
			t.Errorf("%q ran the command", args)
		}
	}
	var out bytes.Buffer
	Help(&out, Find(toy(new([]string), new(time.Duration)), "report"), nil)
	want := "usage: tool report FILE... [flags]\n\nprint files\n\nflags:\n  --csv DIR\n      write CSV into DIR\n  --duration duration\n      how long (default 5s)\n  --v\n      verbose\n"
	if out.String() != want {
		t.Errorf("help:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestMainExit(t *testing.T) {
	var out, errw bytes.Buffer
	root := toy(new([]string), new(time.Duration))
	if code := Main(root, []string{"cluster", "up", "--nodes", "3"}, &out, &errw); code != 2 || errw.String() != "tool cluster up: unknown flag --nodes; see `tool cluster up --help` for the flags\n" {
		t.Errorf("exit %d, stderr %q", code, errw.String())
	}
	errw.Reset()
	root.Subs = append(root.Subs, &Command{Name: "fail", Summary: "fails", Run: func(c *Ctx) error {
		if _, err := c.Parse(); err != nil {
			return err
		}
		return errors.New("broke\nhere")
	}})
	if code := Main(root, []string{"fail"}, &out, &errw); code != 1 || errw.String() != "tool fail: broke\\nhere\n" {
		t.Errorf("exit %d, stderr %q", code, errw.String())
	}
	if code := Main(root, []string{"fail", "-h"}, &out, &errw); code != 0 {
		t.Errorf("help: exit %d", code)
	}
}

func TestVersion(t *testing.T) {
	var b bytes.Buffer
	WriteVersion(&b, "tool", "1.2.3")
	for _, want := range []string{"tool 1.2.3\n", "\nmodule: ", "\ncommit: ", "\ngo: go1."} {
		if !strings.Contains("\n"+b.String(), want) {
			t.Errorf("version %q lacks %q", b.String(), want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	root := toy(new([]string), new(time.Duration))
	vals := Values{"csv": func() []string { return []string{"out", "tmp"} }}
	var bash, zsh, fish bytes.Buffer
	for sh, b := range map[string]*bytes.Buffer{"bash": &bash, "zsh": &zsh, "fish": &fish} {
		if err := WriteCompletion(b, sh, root, vals); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteCompletion(&bytes.Buffer{}, "bsh", root, vals); err == nil || !strings.Contains(err.Error(), `did you mean "bash"?`) {
		t.Errorf("bsh: %v", err)
	}
	for _, want := range []string{`"cluster") echo "status up" ;;`, `"report") echo "--csv --duration --v --help" ;;`, `csv) echo "out tmp" ;;`} {
		if !strings.Contains(bash.String(), want) {
			t.Errorf("bash script lacks %q", want)
		}
	}
	if !strings.Contains(zsh.String(), "bashcompinit") || !strings.Contains(fish.String(), "complete -c tool -n '__tool_at cluster' -a up -d 'start it'") ||
		!strings.Contains(fish.String(), "complete -c tool -n '__tool_at report' -l csv -r -a '(__tool_list out tmp)' -d 'write CSV into DIR'") ||
		!strings.Contains(fish.String(), "complete -c tool -n '__tool_at report' -s v") {
		t.Errorf("zsh or fish script wrong:\n%s\n%s", zsh.String(), fish.String())
	}
	dir := t.TempDir()
	for sh, b := range map[string]*bytes.Buffer{"bash": &bash, "zsh": &zsh, "fish": &fish} {
		p := filepath.Join(dir, sh)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath(sh); err != nil {
			t.Logf("%s not installed: its script is checked as text only", sh)
			continue
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v: %s", sh, err, out)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for line, want := range map[string]string{
		"tool re":                 "report",
		"tool cluster ":           "status up",
		"tool cluster u":          "up",
		"tool report --c":         "--csv",
		"tool report --csv ":      "out tmp",
		"tool report --csv o":     "out",
		"tool report --csv a,t":   "a,tmp",
		"tool report x.json -":    "--csv --duration --v --help",
		"tool report --csv x --d": "--duration",
	} {
		words := strings.Split(line, " ")
		script := ". " + filepath.Join(dir, "bash") + `; COMP_WORDS=(` + quoteAll(words) + `); COMP_CWORD=` + strconv.Itoa(len(words)-1) + `; _tool_complete; echo "${COMPREPLY[*]}"`
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("completing %q: %q (%v), want %q", line, out, err, want)
		}
	}
}

func quoteAll(ws []string) string {
	var q []string
	for _, w := range ws {
		q = append(q, "'"+w+"'")
	}
	return strings.Join(q, " ")
}
