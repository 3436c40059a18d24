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
	"unicode"

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
		t.Errorf("%d marked blocks in the docs, want the README's headline table, docs/report.md's recommend examples and the docs' pooled table", blocks)
	}
}

// docOutput runs one cnperf command in-process and returns its output; the
// commands a doc may name read stored files only.
func docOutput(t *testing.T, args []string) (string, error) {
	t.Helper()
	switch args[0] {
	case "report":
		return stdout(t, func() error { return call("report", args[1:]) })
	case "recommend":
		return stdout(t, func() error { return call("recommend", args[1:]) })
	case "compare":
		var b bytes.Buffer
		err := compareArgs(args[1:], &b)
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

// docLink is a markdown link or image: [text](target) or ![alt](target).
var docLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks checks that every relative link of the README and docs/*.md
// points to a file of the repository and, with a #fragment, to a heading of
// that file (GitHub's anchors): moving a section cannot leave a link behind.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"))
	links := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docLink.FindAllStringSubmatch(proseOf(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			rel, _ := filepath.Rel(root, doc)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: no such file", rel, target)
				continue
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s: link %q: a fragment into a file that is not markdown", rel, target)
				continue
			}
			tb, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !anchorsOf(string(tb))[frag] {
				trel, _ := filepath.Rel(root, path)
				t.Errorf("%s: link %q: %s has no heading with that anchor", rel, target, trel)
			}
		}
	}
	if links < 20 {
		t.Errorf("%d relative links found in the docs: the link pattern finds too few", links)
	}
}

// proseOf blanks a markdown text's fenced code blocks: links and headings
// count only outside them.
func proseOf(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// anchorsOf returns the anchors GitHub gives a markdown text's headings:
// lower case, punctuation dropped, spaces as hyphens, a repeated one
// suffixed -1, -2...
func anchorsOf(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(proseOf(text), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		a := slugOf(title)
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// slugOf is GitHub's anchor of one heading.
func slugOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlugOf(t *testing.T) {
	for _, c := range []struct{ title, want string }{
		{"Exit statuses", "exit-statuses"},
		{"Multi-host Docker on one machine (`--backend docker-lab`)", "multi-host-docker-on-one-machine---backend-docker-lab"},
		{"Exports *(new)*: CSV, OpenMetrics, NDJSON", "exports-new-csv-openmetrics-ndjson"},
		{"The test suite (`scripts/test.sh`)", "the-test-suite-scriptstestsh"},
		{"Building the lab: `cnperf bench lab` (issue 26)", "building-the-lab-cnperf-bench-lab-issue-26"},
		{"Bad input: 77 cases, each one line naming the fix", "bad-input-77-cases-each-one-line-naming-the-fix"},
	} {
		if got := slugOf(c.title); got != c.want {
			t.Errorf("slugOf(%q) = %q, want %q", c.title, got, c.want)
		}
	}
	a := anchorsOf("# A\n## A\n```\n# A\n```\n## B b\n")
	for _, want := range []string{"a", "a-1", "b-b"} {
		if !a[want] {
			t.Errorf("anchorsOf: no %q in %v", want, a)
		}
	}
	if a["a-2"] {
		t.Errorf("anchorsOf counted a heading inside a code block: %v", a)
	}
}
