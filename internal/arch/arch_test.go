// Package arch holds the test that keeps the layering docs/architecture.md
// draws: which package may import which.
package arch

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"

	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/cnperf/cnperf/"

// imports maps every package of the module (its path under the module,
// e.g. "internal/runner") to the module packages its non-test files
// import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	seen := map[string]map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own (kube/pause, flannel's stub)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if seen[rel] == nil {
			seen[rel] = map[string]bool{}
			out[rel] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if q, ok := strings.CutPrefix(p, module); ok && !seen[rel][q] {
				seen[rel][q] = true
				out[rel] = append(out[rel], q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// backendOf is the backend a package belongs to ("" when none): the
// folder under internal/backend, but for the seam itself, its registry of
// all and the test fake.
func backendOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "internal/backend/")
	if !ok {
		return ""
	}
	b, _, _ := strings.Cut(rest, "/")
	if b == "all" || b == "backendtest" {
		return ""
	}
	return b
}

// TestNoBackendImportsAnother: backends are siblings, never libraries of
// each other; what two share lives below them (lab, hostprobe,
// dockerengine).
func TestNoBackendImportsAnother(t *testing.T) {
	all := imports(t)
	if len(all) < 20 {
		t.Fatalf("found %d packages; is the test run from internal/arch?", len(all))
	}
	for pkg, ims := range all {
		b := backendOf(pkg)
		if b == "" {
			continue
		}
		for _, im := range ims {
			if o := backendOf(im); o != "" && o != b {
				t.Errorf("%s imports %s: a backend imports another", pkg, im)
			}
		}
	}
}

// TestLayers: a package never imports one of a layer it sits below.
func TestLayers(t *testing.T) {
	all := imports(t)
	for _, tc := range []struct {
		pkg       string
		forbidden []string // prefixes
		why       string
	}{
		{"internal/backend", []string{"internal/runner", "internal/experiment", "internal/sched", "internal/report"}, "the seam sits below what runs on it"},
		{"internal/cleanup", []string{"internal/backend", "internal/runner", "internal/experiment", "internal/svc"}, "cleaners register with it; it names none"},
		{"internal/hostprobe", []string{"internal/backend/", "internal/runner", "internal/experiment"}, "the backends' shared readers sit below them"},
		{"internal/experiment", []string{"internal/backend/", "internal/runner", "internal/plan", "internal/report"}, "an experiment asks for capabilities, never for a backend"},
		{"internal/runner", []string{"internal/backend/", "internal/report"}, "the runner executes a plan on the backends it was given; figures are the workloads'"},
		{"internal/recommend", []string{"internal/report", "internal/runner"}, "recommend reads results and the workloads' figures"},
		{"internal/plan", []string{"internal/backend/", "internal/runner", "internal/report"}, "a plan names backends through their registry"},
		{"internal/labtest", []string{"internal/runner", "internal/plan", "internal/backend/"}, "a test of the lab's helpers compiles no runner and no backend (labtest/labrun runs plans)"},
		{"internal/section", []string{"internal/report", "internal/experiment", "internal/runner", "internal/plan", "internal/backend"}, "the report's kit sits below report and the experiments whose sections use it"},
		{"internal/suite", []string{"internal/runner", "internal/plan", "internal/backend"}, "a suite is data"},
	} {
		for pkg, ims := range all {
			if pkg != tc.pkg && (!strings.HasPrefix(pkg, tc.pkg+"/") || tc.pkg == "internal/labtest") {
				continue
			}
			for _, im := range ims {
				for _, f := range tc.forbidden {
					if (im == f || strings.HasPrefix(im, f)) && im != "internal/backend/all" {
						t.Errorf("%s imports %s: %s", pkg, im, tc.why)
					}
				}
			}
		}
	}
}

// TestThinCommand: cmd/cnperf is parsing and dispatch; what it does lives
// in the packages below it.
func TestThinCommand(t *testing.T) {
	const limit = 800
	files, err := filepath.Glob("../../cmd/cnperf/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cmd/cnperf files found (%v)", err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines >= limit {
		t.Errorf("cmd/cnperf has %d lines of non-test Go, want under %d: move what is not flag parsing and dispatch into a package", lines, limit)
	}
}

// TestNeedRoot: a test that needs root skips through testutil.NeedRoot
// (or labtest's), saying what for, never by testing the uid by hand.
func TestNeedRoot(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/internal/arch/") {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "Geteuid() != 0") {
			t.Errorf("%s checks the uid by hand; use testutil.NeedRoot(t, why)", path)
		}
		return nil
	})
	if err != nil || n < 50 {
		t.Fatalf("walked %d test files: %v", n, err)
	}
}
