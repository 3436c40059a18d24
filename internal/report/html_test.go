package report

import (
	"bytes"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// pageRuns are stored real runs that together hold every kind of section:
// the comparison (rr_stream_repeat, a file without summaries or intervals,
// as today's runs without --repeat write; summaries, with them), figures
// against message size (sizes_64 and sizes_16384: tcp_stream at 64 B and
// 16384 B beside rr_stream_repeat's 256 B), latency spectra with saturated
// steps (load_rates), start-up phases (startup) and service scaling
// (services).
var pageRuns = []string{"rr_stream_repeat", "sizes_64", "sizes_16384", "load_rates", "startup", "services"}

// experimentRuns are the stored real runs of the experiments and seed
// suites: a size sweep in one run, noisy neighbours, all-to-all, the
// start-up suite and seed 000's latency suite. Together they
// hold every other kind of section, the studies' tables among them.
var experimentRuns = []string{"sizes_sweep", "interference", "alltoall", "startup_suite", "seed_latency"}

// exampleRuns are the README's runs (docs/examples): the default suite and
// --suite clusterip, each with its studies' tables.
var exampleRuns = []string{"../../../docs/examples/default", "../../../docs/examples/clusterip"}

func readInputs(t *testing.T, names ...string) []Input {
	t.Helper()
	var ins []Input
	for _, n := range names {
		p := filepath.Join("testdata", n+".json")
		r, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, NewInput(p, r))
	}
	return ins
}

// TestPageSections: the page has a section for each kind of data the runs
// hold and none for what they lack, every chart with data in it.
func TestPageSections(t *testing.T) {
	for _, c := range []struct {
		runs []string
		want string
	}{
		{pageRuns, "comparison sizes latency startup services studies environment networks"},
		{[]string{"summaries"}, "comparison latency studies environment networks"},
		{[]string{"startup"}, "comparison startup environment networks"},
		{[]string{"services"}, "services environment networks"},
		{[]string{"sizes_sweep"}, "comparison sizes studies environment networks"},
		{[]string{"interference"}, "comparison latency interference studies environment networks"},
		{[]string{"alltoall"}, "comparison latency alltoall studies environment networks"},
		{[]string{"startup_suite"}, "comparison startup studies environment networks"},
		{[]string{"seed_latency"}, "comparison latency studies environment networks"},
		{exampleRuns[:1], "comparison latency studies environment networks"},
		{exampleRuns[1:], "services studies environment networks"},
	} {
		p := BuildPage(readInputs(t, c.runs...))
		var got []string
		for _, s := range p.Sections {
			got = append(got, s.ID)
			for _, ch := range s.Charts {
				if ch.Empty() {
					t.Errorf("%v: chart %q has no data", c.runs, ch.Title)
				}
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v: sections %v, want %s", c.runs, got, c.want)
		}
	}
}

// TestPageSelfContained: nothing on the page is fetched: no src or href to
// another host, the library inline.
func TestPageSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, readInputs(t, pageRuns...)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(page); m != "" {
		t.Errorf("the page refers to another host: %q", m)
	}
	if !strings.Contains(page, "Chart.js v3.9.1") {
		t.Error("the plotting library is not inline")
	}
}

var figureRE = regexp.MustCompile(`<figure class="chart" id="(chart-\d+)"([^>]*)>`)
var attrRE = regexp.MustCompile(`data-(points|drawn)="(\d+)"`)

// TestStudyTables: each seed suite's page sets the studies' tables its
// rows stand for beside it, and no other.
func TestStudyTables(t *testing.T) {
	for _, c := range []struct {
		run  string
		want string
	}{
		{"seed_latency", "000-4k-20 000-4k-60 000-350-20"},
		{"startup_suite", "001-startup"},
		{"alltoall", "001-alltoall"},
		{"sizes_sweep", "001-tcp-256 001-udp-256 001-bulk-1vm 001-osu-1vm"},
		{"interference", "001-tcp-256 001-lat-16 001-bulk-1vm 001-osu-1vm 001-interference 002-overhead"},
		{exampleRuns[0], "001-tcp-256 001-lat-16 001-bulk-1vm 001-osu-1vm 002-overhead"},
		{exampleRuns[1], "003-short 003-long"},
	} {
		p := BuildPage(readInputs(t, c.run))
		var got []string
		for _, s := range p.Sections {
			for _, sub := range s.Subs {
				if s.ID == "studies" {
					got = append(got, strings.TrimPrefix(sub.ID, "study-"))
				}
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: study tables %v, want %s", c.run, got, c.want)
		}
	}
}

// TestPageInChromium renders the pages of the stored runs in headless
// Chromium with networking off, and checks every chart was drawn (Chart.js
// laid out data points and its canvas has ink), no script error, and the
// screenshot is not blank: the six runs of pageRuns overlaid, the
// experiments' and seed suites' runs overlaid (studies' tables,
// interference, all-to-all), and the README's two examples. (Parallel
// flows' section is the parallel experiment's, tested with its run.)
func TestPageInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium, scripts/install-deps.sh): the page is not rendered")
	}
	if testing.Short() {
		t.Skip("-short: not starting a browser")
	}
	for _, c := range []struct {
		name     string
		runs     []string
		sections []string // each must be on the page with a chart drawn
	}{
		{"stored", pageRuns, []string{"comparison", "sizes", "latency", "startup", "services"}},
		{"experiments", experimentRuns, []string{"studies", "comparison", "sizes", "latency", "startup", "interference", "alltoall"}},
		{"examples", exampleRuns, []string{"studies", "comparison", "services"}},
	} {
		t.Run(c.name, func(t *testing.T) { renderInChromium(t, bin, c.runs, c.sections) })
	}
}

func renderInChromium(t *testing.T, bin string, runs, sections []string) {
	dir := t.TempDir()
	p := BuildPage(readInputs(t, runs...))
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	chrome := func(args ...string) (stdout, stderr string) {
		return render(t, bin, dir, page, 1200, 3000, append([]string{"--enable-logging=stderr", "--v=0"}, args...)...)
	}
	dom, logs := chrome("--dump-dom")
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "CONSOLE") && (strings.Contains(line, "Uncaught") || strings.Contains(line, "ERROR") || strings.Contains(line, "rror")) {
			t.Errorf("console error: %s", line)
		}
	}
	if m := regexp.MustCompile(`<pre id="js-errors"[^>]*>([^<]*)<`).FindStringSubmatch(dom); m == nil || m[1] != "" {
		t.Errorf("script errors on the page: %q", m)
	}
	drawn := map[string][2]int{}
	for _, m := range figureRE.FindAllStringSubmatch(dom, -1) {
		var v [2]int
		for _, a := range attrRE.FindAllStringSubmatch(m[2], -1) {
			n, _ := strconv.Atoi(a[2])
			if a[1] == "points" {
				v[0] = n
			} else {
				v[1] = n
			}
		}
		drawn[m[1]] = v
	}
	total := 0
	ids := p.ChartIDs()
	for _, sec := range sections {
		if len(ids[sec]) == 0 {
			t.Errorf("section %s has no chart", sec)
		}
	}
	for sec, ids := range ids {
		for _, id := range ids {
			total++
			v, ok := drawn[id]
			switch {
			case !ok:
				t.Errorf("section %s: chart %s is not on the rendered page", sec, id)
			case v[0] == 0 || v[1] == 0:
				t.Errorf("section %s: chart %s drew %d data points, %d pixels", sec, id, v[0], v[1])
			}
		}
	}
	if !strings.Contains(dom, `data-charts-done="`+strconv.Itoa(total)+`"`) {
		t.Errorf("the page's script did not finish its %d charts", total)
	}
	img := screenshot(t, bin, dir, page, 1200, 3000)
	if n := inked(img); n < 10000 {
		t.Errorf("the screenshot is nearly blank: %d non-white pixels", n)
	}
	t.Logf("%d charts drawn in %d sections, %d bytes", total, len(p.Sections), b.Len())
}

// inked counts the pixels that are not white.
func inked(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
		}
	}
	return n
}

// TestOldFilesRender: run files written before rounds and summaries (no
// intervals: cnperf/run/v1 as the first runs wrote it) still make a page:
// every such stored file has charts, and a one-round file's comparison
// has medians without intervals rather than made-up ones.
func TestOldFilesRender(t *testing.T) {
	old := 0
	paths, _ := filepath.Glob("testdata/*.json")
	for _, path := range paths {
		run, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Summaries) > 0 || run.Rounds > 0 {
			continue
		}
		old++
		p := BuildPage([]Input{NewInput(path, run)})
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		n := 0
		for _, ids := range p.ChartIDs() {
			n += len(ids)
		}
		if n == 0 {
			t.Errorf("%s: no chart", path)
		}
	}
	if old < 5 {
		t.Errorf("%d stored files without rounds or summaries, want the old ones (rr_stream_repeat, startup, services, load_*)", old)
	}
	// one result per cell, no rounds: medians, no interval
	run, err := result.Read("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range BuildPage([]Input{{Name: "reference", Run: run}}).Sections {
		if s.ID != "comparison" {
			continue
		}
		for _, c := range s.Charts {
			for _, se := range c.Series {
				for _, pt := range se.Points {
					if pt.Lo != nil {
						t.Errorf("%s: %s has an interval from one sample", c.Title, se.Label)
					}
				}
			}
		}
	}
}

// TestServicesVerdictTable: the services section's ratios to the pod IP
// each have a row with the verdict stats gives them, as the comparison
// section's ratios do.
func TestServicesVerdictTable(t *testing.T) {
	ins := readInputs(t, exampleRuns[1])
	want := map[string]string{} // cell and figure -> verdict word
	for _, s := range kit.Summaries(ins[0].Run) {
		if f, ok := kit.FigureOf(s.Cell.Workload, s.Figure); ok && f.Ratio && s.Cell.LB != "" && s.Cell.Services > 0 && s.VsBaseline != nil {
			want[s.Cell.Workload+"|"+s.Cell.Network+" lb="+s.Cell.LB+" "+s.Cell.Step+"|"+f.Label] = stats.VerdictOf(*s.VsBaseline)
		}
	}
	if len(want) == 0 {
		t.Fatal("the clusterip example has no service ratio to check")
	}
	var rows [][]string
	for _, sec := range BuildPage(ins).Sections {
		if sec.ID != "services" {
			continue
		}
		for _, tb := range sec.Tables {
			if strings.Contains(tb.Caption, "verdict") {
				rows = append(rows, tb.Rows...)
			}
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%d verdict rows in the services section, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		w, ok := want[r[1]+"|"+r[2]+"|"+r[3]]
		if !ok || !strings.HasPrefix(r[5], w) || r[4] != ratio(*summaryOf(ins[0].Run, r)) {
			t.Errorf("row %q: want verdict %q", r, w)
		}
	}
}

// summaryOf finds the comparison a services verdict row is about.
func summaryOf(run *result.Run, row []string) *result.Comparison {
	for _, s := range kit.Summaries(run) {
		if f, ok := kit.FigureOf(s.Cell.Workload, s.Figure); ok && s.Cell.Workload == row[1] && s.Cell.Network+" lb="+s.Cell.LB+" "+s.Cell.Step == row[2] && f.Label == row[3] && s.VsBaseline != nil {
			return s.VsBaseline
		}
	}
	return &result.Comparison{}
}
