package arch

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// layering is the architecture docs/architecture.md draws, top to bottom:
// every package of the module sits in one row, and imports only packages
// of its own row or of rows below it. An import of a row above is an arrow
// back up: the type or function it wants lives too high (move it down, as
// Placement and CPUTimes moved to ground) or the importer sits too low.
//
// A pattern is a package path under the module; "X/..." is every package
// below X (not X itself). A package takes the row of its longest matching
// pattern, so "internal/plan/profile" sits apart from "internal/plan".
// In a row marked apart, no package imports another of its row: they are
// siblings (the commands' bodies; the readers of results).
var layering = []struct {
	row      string
	packages []string
	apart    bool
}{
	{"command", []string{"cmd/...", "internal/hostsnap/cmd/...", "internal/testsum"}, false},
	{"commands made of commands", []string{"internal/enginebench"}, false},
	{"commands' bodies", []string{"internal/session", "internal/standalone", "internal/labhold",
		"internal/labbench", "internal/plan/profile", "internal/catalog", "internal/kubelocal", "internal/bpfcost"}, true},
	{"test harnesses", []string{"internal/labtest", "internal/labtest/...", "internal/campaign", "internal/soak"}, false},
	{"execution", []string{"internal/runner"}, false},
	{"readers", []string{"internal/report", "internal/recommend"}, true},
	{"the plan", []string{"internal/plan", "internal/scenario", "internal/suite"}, false},
	{"experiments", []string{"internal/experiment", "internal/experiment/..."}, false},
	{"scheduler, measure", []string{"internal/sched", "internal/measure"}, false},
	{"report's kit", []string{"internal/section"}, false},
	{"backends", []string{"internal/backend/..."}, false},
	{"the backend seam", []string{"internal/backend"}, false},
	{"what backends share", []string{"internal/hostprobe", "internal/dockerengine", "internal/tuning", "internal/agentimage"}, false},
	{"agent", []string{"internal/agent"}, false},
	{"parts", []string{"internal/netmode", "internal/netmode/...", "internal/svc", "internal/svc/...",
		"internal/workload", "internal/workload/...", "internal/ctrlplane", "internal/ctrlplane/...", "internal/tund"}, false},
	{"kernel helpers and engines", []string{"internal/lab", "internal/lab/...", "internal/cleanup", "internal/loadgen", "internal/nginx",
		"internal/httpserver", "internal/hist", "internal/speed", "internal/pmqos", "internal/hostsnap"}, false},
	{"ground", []string{"internal/ground", "internal/result", "internal/stats", "internal/option", "internal/registry",
		"internal/exitcode", "internal/cli", "internal/progress", "internal/golden", "internal/testutil",
		"internal/racedet", "internal/tmpdir", "internal/arch"}, false},
}

// rowOf is the index of pkg's row in layering (0 is the top), by its
// longest matching pattern; -1 when no row names it.
func rowOf(pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layering {
		for _, p := range l.packages {
			ok := pkg == p
			if base, sub := strings.CutSuffix(p, "/..."); sub {
				ok = strings.HasPrefix(pkg, base+"/")
			}
			if ok && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// TestEveryPackageHasARow: a new package is placed in the layering (here
// and in docs/architecture.md) when it is made, so its arrows are judged.
func TestEveryPackageHasARow(t *testing.T) {
	for pkg := range imports(t) {
		if rowOf(pkg) < 0 {
			t.Errorf("%s sits in no row of the layering: add it to a row of layering (internal/arch) and of docs/architecture.md", pkg)
		}
	}
}

// TestNoArrowBackUp: no package imports one of a row above its own.
func TestNoArrowBackUp(t *testing.T) {
	all := imports(t)
	n := 0
	for pkg, ims := range all {
		from := rowOf(pkg)
		for _, im := range ims {
			n++
			to := rowOf(im)
			switch {
			case from < 0 || to < 0:
			case to < from:
				t.Errorf("%s (%s) imports %s (%s): an arrow back up; move what it needs down, or the importer up",
					pkg, layering[from].row, im, layering[to].row)
			case to == from && layering[from].apart:
				t.Errorf("%s imports %s: the %s are siblings; move what both need into a row below them",
					pkg, im, layering[from].row)
			}
		}
	}
	if n < 200 {
		t.Fatalf("judged %d imports; is the test run from internal/arch?", n)
	}
}

// folder is the top folder a package belongs to: internal/X for every
// package below internal/X, the package itself elsewhere.
func folder(pkg string) string {
	if rest, ok := strings.CutPrefix(pkg, "internal/"); ok {
		top, _, _ := strings.Cut(rest, "/")
		return "internal/" + top
	}
	return pkg
}

// TestNoFolderCycles: Go refuses a cycle of packages, not one of folders;
// netmode's packages importing backend's while backend's imported
// netmode's was one. Taken together, a top folder's packages never import
// back into a folder that imports them.
func TestNoFolderCycles(t *testing.T) {
	g := map[string]map[string][]string{} // folder -> folder -> "pkg -> import" edges
	for pkg, ims := range imports(t) {
		a := folder(pkg)
		for _, im := range ims {
			if b := folder(im); a != b {
				if g[a] == nil {
					g[a] = map[string][]string{}
				}
				g[a][b] = append(g[a][b], pkg+" -> "+im)
			}
		}
	}
	for _, c := range cycles(g) {
		var why []string
		for _, a := range c {
			for _, b := range c {
				if e := g[a][b]; len(e) > 0 {
					sort.Strings(e)
					why = append(why, e[0])
				}
			}
		}
		t.Errorf("folders in a circle: %s, through %s", strings.Join(c, ", "), strings.Join(why, "; "))
	}
}

// cycles lists the strongly connected components of more than one node
// (Tarjan), each in an order that walks the circle where it can.
func cycles(g map[string]map[string][]string) [][]string {
	var nodes []string
	for n := range g {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		on[v] = true
		var next []string
		for w := range g[v] {
			next = append(next, w)
		}
		sort.Strings(next)
		for _, w := range next {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				sort.Strings(comp)
				out = append(out, comp)
			}
		}
	}
	for _, n := range nodes {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return out
}

func TestCyclesFinds(t *testing.T) {
	g := map[string]map[string][]string{
		"a": {"b": {"a1 -> b1"}}, "b": {"c": {"b1 -> c1"}}, "c": {"a": {"c1 -> a1"}, "d": {"c1 -> d1"}}, "d": {},
	}
	if got := fmt.Sprint(cycles(g)); got != "[[a b c]]" {
		t.Errorf("cycles = %s, want [[a b c]]", got)
	}
	delete(g["c"], "a")
	if got := cycles(g); len(got) != 0 {
		t.Errorf("cycles of a tree = %v, want none", got)
	}
}

// TestReportReadsOnly: report turns results into text, pages and exports;
// it links no workload, load engine or server (they made the results).
func TestReportReadsOnly(t *testing.T) {
	all := imports(t)
	deps := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, im := range all[p] {
			if !deps[im] {
				deps[im] = true
				walk(im)
			}
		}
	}
	walk("internal/report")
	for d := range deps {
		for _, f := range []string{"internal/workload/", "internal/loadgen", "internal/nginx", "internal/httpserver"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("internal/report depends on %s: report reads results; what prints a command's own progress lives with the command", d)
			}
		}
	}
	if len(deps) < 3 {
		t.Fatalf("internal/report has %d dependencies in the module; is the graph read?", len(deps))
	}
}

// TestLayeringDocumented: docs/architecture.md's table of rows is this
// layering: the same rows in the same order, each naming the packages the
// test places there (`netmode/*` for "internal/netmode/...").
func TestLayeringDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string // the table's lines, in order
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| row |") && strings.Count(l, "|") == 3 {
			rows = append(rows, l)
		}
	}
	if len(rows) != len(layering) {
		t.Fatalf("docs/architecture.md's layering table has %d rows, the test %d", len(rows), len(layering))
	}
	for i, l := range layering {
		cells := strings.Split(rows[i], "|")
		if name := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cells[1]), "(apart)")); name != l.row || strings.Contains(cells[1], "(apart)") != l.apart {
			t.Errorf("row %d: the page says %q, the test %q (apart: %v)", i+1, strings.TrimSpace(cells[1]), l.row, l.apart)
		}
		for _, p := range l.packages {
			p = strings.TrimPrefix(p, "internal/")
			if base, sub := strings.CutSuffix(p, "/..."); sub {
				p = base + "/*"
			}
			if p != "arch" && !strings.Contains(cells[2], "`"+p+"`") {
				t.Errorf("row %q: the page does not name `%s`", l.row, p)
			}
		}
	}
}
