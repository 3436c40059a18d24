package report

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/result"
)

// TestAnswer: the summary says only what the verdicts show: a place where
// every pair differs, a cost with its interval where a ratio differs,
// equivalent and undecided by name; never "fastest" where it is not shown.
func TestAnswer(t *testing.T) {
	runs := exportRuns(t)
	for _, c := range []struct {
		run       string
		want, not []string
	}{
		{"summaries", []string{
			"tcp_rr same-host, trans/s: host is the fastest network here",
			"bridge loses 32 % of the baseline's trans/s [29, 35]",
			"host is equivalent to the baseline (within ±5 %)",
			"host has 29 % more Gbit/s than the baseline [27, 31]",
		}, nil},
		{"examples/default", []string{
			"tcp_rr cross-host, trans/s: no network is shown the fastest; undecided: host, nat, vxlan, host-gw.",
			"vxlan loses 63 % of the baseline's Gbit/s [20, 83]",
		}, []string{"is the fastest"}},
		{"startup", []string{"startup cross-host, ms: no network is shown the quickest; undecided: host, vxlan."}, []string{"fastest", "loses"}},
	} {
		got := strings.Join(Answer([]Input{runs[c.run]}), " ")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the summary does not say %q:\n%s", c.run, w, got)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: the summary says %q:\n%s", c.run, n, got)
			}
		}
	}
	// a time: above 1 is longer
	f := result.Figure{Label: "ms", Better: result.LowerBetter, Kind: result.KindTime, Ratio: true}
	if got := effect(f, result.Comparison{Ratio: 1.38, CILow: 1.11, CIHigh: 1.59, CILevel: 0.95}); got != "takes 38 % longer than the baseline [11, 59]" {
		t.Errorf("effect of a slower start-up: %q", got)
	}
}

// TestPageLeadsWithTheAnswer renders the stored default run's page in
// headless Chromium on a laptop's screen (1366 x 768) and checks that the
// first screen holds the comparison's first chart and the summary, that
// every chart is drawn at least 600 px wide, that no text is below 12 px,
// and that in dark mode the page is dark.
func TestPageLeadsWithTheAnswer(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium, scripts/install-deps.sh): the page is not rendered")
	}
	if testing.Short() {
		t.Skip("-short: not starting a browser")
	}
	in := exportRuns(t)["examples/default"]
	dir := t.TempDir()
	page := filepath.Join(dir, "default.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildPage([]Input{in}).Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const width, height = 1366, 768
	chrome := func(args ...string) string {
		out, _ := render(t, bin, dir, page+"#measure", width, height, args...)
		return out
	}
	attr := func(tag, name string) int { return dataAttr(t, tag, name) }
	dom := chrome("--dump-dom")
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	// the first screen is the viewport: the window less the browser's own
	// bars (headless Chromium keeps 143 px of a 768 px window for them, as
	// a laptop's browser does)
	vp := regexp.MustCompile(`data-viewport="(\d+)x(\d+)"`).FindStringSubmatch(body)
	if vp == nil || vp[1] != strconv.Itoa(width) {
		t.Fatalf("the page did not measure itself in a %d px wide window: %s", width, body)
	}
	screen, _ := strconv.Atoi(vp[2])
	if screen < 500 || screen > height {
		t.Fatalf("a viewport %s px high in a %d px window", vp[2], height)
	}
	figs := regexp.MustCompile(`<figure class="chart" id="chart-\d+"[^>]*>`).FindAllString(dom, -1)
	if len(figs) < 4 {
		t.Fatalf("%d charts on the page", len(figs))
	}
	for _, fig := range figs {
		if w := attr(fig, "width"); w < 600 {
			t.Errorf("a chart is %d px wide, want at least 600: %s", w, fig)
		}
	}
	first := figs[0]
	answer := regexp.MustCompile(`<p class="answer" id="answer"[^>]*>`).FindString(dom)
	if answer == "" {
		t.Fatal("no summary on the page")
	}
	if b := attr(first, "bottom"); b > screen {
		t.Errorf("the first chart ends at %d px, below the first screen (%d)", b, screen)
	}
	if b := attr(answer, "bottom"); b > screen {
		t.Errorf("the summary ends at %d px, below the first screen (%d)", b, screen)
	}
	if strings.Index(dom, `id="answer"`) > strings.Index(dom, `id="studies"`) && strings.Contains(dom, `id="studies"`) {
		t.Error("the studies come before the summary")
	}
	if m := attr(body, "min-font"); m < 12 {
		t.Errorf("some text is %d px, want at least 12", m)
	}
	// the first screen, as a screenshot: the first chart's box has ink
	img := screenshot(t, bin, dir, page+"#measure", width, height)
	if b := img.Bounds(); b.Dx() != width {
		t.Errorf("screenshot %v, want %d px wide", b, width)
	}
	if n := inked(img); n < 20000 {
		t.Errorf("the first screen is nearly blank: %d non-white pixels", n)
	}
	// dark mode: the page follows the reader's preference
	dark := regexp.MustCompile(`<body[^>]*>`).FindString(chrome("--force-dark-mode", "--dump-dom"))
	if !strings.Contains(dark, `data-bg="rgb(22, 24, 28)"`) {
		t.Errorf("in dark mode the page is not dark: %s", dark)
	}
	t.Logf("viewport %dx%d: first chart %d px wide, ends at %d px; summary ends at %d px; smallest text %d px", width, screen, attr(first, "width"), attr(first, "bottom"), attr(answer, "bottom"), attr(body, "min-font"))
}

// render opens url (a file path with its #fragment) in headless Chromium
// with a window of w x h px, no network, and returns its output (args such
// as --dump-dom, --screenshot=F, --print-to-pdf=F choose what it is) and
// its log (with --enable-logging=stderr).
func render(t *testing.T, bin, dir, url string, w, h int, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		// networking off: every name fails to resolve, every proxy
		// connection is refused
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--window-size=" + strconv.Itoa(w) + "," + strconv.Itoa(h), "--virtual-time-budget=20000"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+url)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
	}
	return o.String(), e.String()
}

// screenshot renders url as render does into a PNG in dir and decodes it.
func screenshot(t *testing.T, bin, dir, url string, w, h int) image.Image {
	t.Helper()
	shot := filepath.Join(dir, "shot.png")
	render(t, bin, dir, url, w, h, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// dataAttr reads the number in a data-NAME="..." attribute of a tag the
// page's #measure hook wrote.
func dataAttr(t *testing.T, tag, name string) int {
	t.Helper()
	m := regexp.MustCompile(`data-` + name + `="([0-9.]+)"`).FindStringSubmatch(tag)
	if m == nil {
		t.Fatalf("no data-%s in %s", name, tag)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return int(v)
}

// TestPagePrints: the stored default run's page on paper. Chromium prints
// it to a PDF (the real print path: the file is a PDF of a few A4 pages,
// not one page cut off); and the page's print rules, applied on a screen
// as wide as an A4 sheet (794 px at 96 dpi), lay every chart out in one
// column at least 600 px wide, no text below 12 px, black on white.
func TestPagePrints(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium, scripts/install-deps.sh): the page is not printed")
	}
	if testing.Short() {
		t.Skip("-short: not starting a browser")
	}
	var buf strings.Builder
	if err := BuildPage([]Input{exportRuns(t)["examples/default"]}).Write(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	const printRules = "@media print {"
	if strings.Count(html, printRules) != 1 {
		t.Fatalf("the page has %d %q blocks, want 1", strings.Count(html, printRules), printRules)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	page := write("default.html", html)
	const a4w, a4h = 794, 1123

	pdf := filepath.Join(dir, "default.pdf")
	render(t, bin, dir, page, a4w, a4h, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
	raw, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "%PDF-") {
		t.Fatalf("%s is not a PDF: %.20q", pdf, raw)
	}
	pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAllIndex(raw, -1))
	if pages < 2 || pages > 40 {
		t.Errorf("the printed page has %d sheets, want between 2 and 40", pages)
	}

	// the print rules on an A4-wide screen
	printed := write("print.html", strings.Replace(html, printRules, "@media all {", 1))
	dom, _ := render(t, bin, dir, printed+"#measure", a4w, a4h, "--dump-dom")
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	figs := regexp.MustCompile(`<figure class="chart" id="chart-\d+"[^>]*>`).FindAllString(dom, -1)
	if len(figs) < 4 {
		t.Fatalf("%d charts on the printed page", len(figs))
	}
	last := -1
	for _, fig := range figs {
		if w := dataAttr(t, fig, "width"); w < 600 {
			t.Errorf("a printed chart is %d px wide, want at least 600: %s", w, fig)
		}
		// one column: each chart starts below the one before it
		top := dataAttr(t, fig, "top")
		if top <= last {
			t.Errorf("a printed chart starts at %d px, beside the one before it (which starts at %d): %s", top, last, fig)
		}
		last = top
	}
	if m := dataAttr(t, body, "min-font"); m < 12 {
		t.Errorf("some printed text is %d px, want at least 12", m)
	}
	if !strings.Contains(body, `data-bg="rgb(255, 255, 255)"`) || !strings.Contains(body, `data-fg="rgb(0, 0, 0)"`) {
		t.Errorf("the printed page is not black on white: %s", body)
	}
	// and in a dark-mode reader's browser, paper stays white
	darkDOM, _ := render(t, bin, dir, printed+"#measure", a4w, a4h, "--force-dark-mode", "--dump-dom")
	dark := regexp.MustCompile(`<body[^>]*>`).FindString(darkDOM)
	if !strings.Contains(dark, `data-bg="rgb(255, 255, 255)"`) {
		t.Errorf("printed from a dark-mode browser, the page is not white: %s", dark)
	}
	t.Logf("PDF: %d sheets, %d bytes; on A4 width: %d charts, the first %d px wide; smallest text %d px", pages, len(raw), len(figs), dataAttr(t, figs[0], "width"), dataAttr(t, body, "min-font"))
}
