package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/golden"
)

// docCommand marks a block of a doc as the output of one cnperf command on
// stored files: the line `<!-- cnperf: ARGS -->` right before a fenced
// block. TestDocTables runs the command and fails where the block differs.
var docCommand = regexp.MustCompile("(?m)^<!-- cnperf: (.+?) -->\n```[a-z]*\n")

// docFiles are the docs whose marked blocks the test regenerates.
var docFiles = []string{"README.md", "docs/report.md", "docs/validation.md", "docs/experiments.md", "docs/results.md"}

// TestDocTables regenerates every marked block of the README and the docs
// from the stored run files it names (docs/examples/), with the command it
// names (report, recommend, compare), and fails where the doc differs:
// every such number is reproducible with that command. go test -update
// rewrites the blocks.
func TestDocTables(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// the commands name files from the repository's root, as a reader runs them
	if err := os.Chdir(filepath.Join("..", "..")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	blocks := 0
	for _, doc := range docFiles {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		var out strings.Builder
		last := 0
		for _, m := range docCommand.FindAllStringSubmatchIndex(text, -1) {
			blocks++
			args := strings.Fields(text[m[2]:m[3]])
			start := m[1]
			end := strings.Index(text[start:], "```\n")
			if end < 0 {
				t.Fatalf("%s: the block of `cnperf %s` is not closed", doc, strings.Join(args, " "))
			}
			end += start
			got, err := docOutput(t, args)
			if err != nil {
				t.Errorf("%s: cnperf %s: %v", doc, strings.Join(args, " "), err)
				continue
			}
			if want := text[start:end]; want != got {
				if !golden.Updating() {
					t.Errorf("%s: the block after `cnperf %s` differs from the command's output (go test ./cmd/cnperf -run TestDocTables -update rewrites it):\n%s", doc, strings.Join(args, " "), diffLines(want, got))
				}
			}
			out.WriteString(text[last:start])
			out.WriteString(got)
			last = end
		}
		out.WriteString(text[last:])
		if golden.Updating() && out.String() != text {
			if err := os.WriteFile(doc, []byte(out.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if blocks < 4 {
		t.Errorf("%d marked blocks in the docs, want the README's headline table, its recommend examples and the docs' pooled table", blocks)
	}
}

// docOutput runs one cnperf command in-process and returns its output; the
// commands a doc may name read stored files only.
func docOutput(t *testing.T, args []string) (string, error) {
	t.Helper()
	switch args[0] {
	case "report":
		return stdout(t, func() error { return cmdReport(args[1:]) })
	case "recommend":
		return stdout(t, func() error { return cmdRecommend(args[1:]) })
	case "compare":
		var b bytes.Buffer
		err := compareMain(args[1:], &b)
		if err != nil && !isExit(err) {
			return "", err
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("a doc block may show report, recommend or compare, not %q", args[0])
}

// isExit says err carries compare's exit status (a gate's verdict).
func isExit(err error) bool {
	var ec exitCode
	return !errors.Is(err, flag.ErrHelp) && errors.As(err, &ec)
}

// diffLines shows the first lines that differ.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 8; i++ {
		var x, y string
		if i < len(w) {
			x = w[i]
		}
		if i < len(g) {
			y = g[i]
		}
		if x != y {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, x, y)
			n++
		}
	}
	return b.String()
}
