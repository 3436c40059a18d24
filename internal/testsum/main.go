// Command testsum reads `go test -json` on stdin and prints what plain
// `go test` would (a line per package, the output of the tests that
// failed, build errors), so that scripts/test.sh keeps go test's usual log
// while it learns what plain output hides: each package's time and each
// skipped test with its reason. Those go to the file named by -record, one
// tab-separated line each, for the suite's summary:
//
//	package	PKG	pass|fail|skip	SECONDS
//	test	PKG	TEST	pass|fail|skip	SECONDS
//	skip	PKG	TEST	REASON
//
// (TEST: subtests too, as TestX/sub).
//
// It exits 1 when a test, a package or a build failed.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, with the
// build events of `go test -json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Elapsed    float64
	Output     string
}

type line struct{ test, text string }

// pkgState is what a package printed so far: shown whole only if it failed.
type pkgState struct {
	lines  []line
	failed map[string]bool
}

func main() {
	record := flag.String("record", "", "append package times and skipped tests to this file")
	flag.Parse()
	var rec io.Writer = io.Discard
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		defer f.Close()
		rec = f
	}
	if !summarize(os.Stdin, os.Stdout, rec) {
		os.Exit(1)
	}
}

// summarize copies in's events to out as plain go test output and writes
// the record lines to rec; it reports whether everything passed.
func summarize(in io.Reader, out, rec io.Writer) (ok bool) {
	ok = true
	pkgs := map[string]*pkgState{}
	state := func(p string) *pkgState {
		s := pkgs[p]
		if s == nil {
			s = &pkgState{failed: map[string]bool{}}
			pkgs[p] = s
		}
		return s
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			// not an event (go test's own complaint, a panic before the
			// test binary ran): pass it on as it is
			fmt.Fprintln(out, sc.Text())
			continue
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "build-fail":
			ok = false
		case e.Action == "output":
			s := state(e.Package)
			s.lines = append(s.lines, line{e.Test, e.Output})
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			if e.Action == "fail" {
				state(e.Package).failed[e.Test] = true
			}
			if e.Action == "skip" {
				fmt.Fprintf(rec, "skip\t%s\t%s\t%s\n", e.Package, e.Test, skipReason(state(e.Package).lines, e.Test))
			}
			fmt.Fprintf(rec, "test\t%s\t%s\t%s\t%.1f\n", e.Package, e.Test, e.Action, e.Elapsed)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			s := state(e.Package)
			if e.Action == "fail" {
				ok = false
			}
			printPackage(out, s, e.Action == "fail")
			fmt.Fprintf(rec, "package\t%s\t%s\t%.1f\n", e.Package, e.Action, e.Elapsed)
			delete(pkgs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsum: reading go test's output:", err)
		ok = false
	}
	// a package that never ended (go test killed): show what it printed
	for _, s := range pkgs {
		for _, l := range s.lines {
			s.failed[l.test] = true
		}
		printPackage(out, s, true)
		ok = false
	}
	return ok
}

// printPackage prints a package's lines as plain go test does: the
// package's own lines (its "ok" line, TestMain's output) always, a test's
// lines only if it failed; the test framework's progress lines never.
func printPackage(out io.Writer, s *pkgState, failed bool) {
	for _, l := range s.lines {
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== PAUSE") ||
			strings.HasPrefix(t, "=== CONT") || strings.HasPrefix(t, "=== NAME"):
			continue
		case strings.HasSuffix(t, "[no test files]"):
			continue
		case l.test == "" && !failed && (t == "PASS" || strings.HasPrefix(t, "--- PASS")):
			continue
		case l.test != "" && !s.failed[l.test]:
			continue
		}
		fmt.Fprint(out, l.text)
	}
}

// skipReason is what test printed before it was skipped, on one line
// (t.Skip's message, and any t.Log before it).
func skipReason(lines []line, test string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if l.test != test || t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
