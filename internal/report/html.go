package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// The plotting library, Chart.js 3.9.1 (MIT), copied from Debian's
// libjs-chart.js 3.9.1+~0.2.1-2 (/usr/share/javascript/chart.js/chart.min.js);
// its licence is assets/chart.js.copyright. See docs/report-html.md for why.
//
//go:embed assets/chart.min.js
var chartJS string

//go:embed assets/page.js
var pageJS string

// ChartLibrary names the vendored plotting library, for the page's footer.
const ChartLibrary = "Chart.js 3.9.1 (MIT), from Debian libjs-chart.js 3.9.1+~0.2.1-2"

// Page is the HTML report of one or more runs, laid out as sections that
// hold only what the runs have data for.
type Page struct {
	Title    string
	Runs     []Input
	Sections []section
	// Warnings are the runs' own (a noisy machine, failed rounds), shown
	// first: the reader must know them to judge every chart.
	Warnings []string
	charts   []chart
}

// BuildPage lays out the report of runs, the answer first: the comparison
// with the baseline (its ratio charts, the summary of their verdicts,
// the verdicts' table, then the figures themselves), then figures against
// message size, latency spectra, start-up phases, service scaling... (each
// only where a run has data for it), the studies, the environment and the
// networks. The runs' warnings follow the comparison, a line at the top
// naming them. Every chart comes from the figures workloads declare
// (FiguresOf) and the typed fields of the results.
func BuildPage(ins []Input) *Page {
	p := &Page{Title: "cnperf report"}
	var names []string
	for _, in := range ins {
		names = append(names, in.Name)
	}
	p.Title += ": " + strings.Join(names, ", ")
	p.Runs = ins
	for _, in := range ins {
		for _, w := range in.Run.Warnings {
			p.Warnings = append(p.Warnings, in.Name+": "+w)
		}
		if in.Run.Incomplete {
			p.Warnings = append(p.Warnings, in.Name+": incomplete: the run was cut short or is still going; cells not shown were not measured")
		}
		if stats.Minority(in.Run) != "" { // two speeds: every chart mixes them
			for _, n := range stats.SpeedNotes(in.Run) {
				p.Warnings = append(p.Warnings, in.Name+": "+n)
			}
		}
	}
	for _, i := range kit.HTMLs() { // comparison, sizes, spectrum... in their rank order
		s := i.HTML(ins)
		if p.place(&s) {
			p.Sections = append(p.Sections, s)
		}
	}
	return p
}

// place drops s's empty charts and numbers the others, in its subsections
// too; it says whether s has anything to show.
func (p *Page) place(s *section) bool {
	var cs []chart
	for _, c := range s.Charts {
		if c.Empty() {
			continue
		}
		c.ID = fmt.Sprintf("chart-%d", len(p.charts)+1)
		p.charts = append(p.charts, c)
		cs = append(cs, c)
	}
	s.Charts = cs
	var subs []section
	for _, sub := range s.Subs {
		if p.place(&sub) {
			subs = append(subs, sub)
		}
	}
	s.Subs = subs
	return len(cs) > 0 || len(s.Tables) > 0 || len(s.Notes) > 0 || len(subs) > 0
}

// ChartIDs lists, per section id, the ids of the charts the page draws
// (its subsections' included): what a test expects to find drawn.
func (p *Page) ChartIDs() map[string][]string {
	m := map[string][]string{}
	var walk func(id string, s section)
	walk = func(id string, s section) {
		for _, c := range s.Charts {
			m[id] = append(m[id], c.ID)
		}
		for _, sub := range s.Subs {
			walk(id, sub)
		}
	}
	for _, s := range p.Sections {
		walk(s.ID, s)
	}
	return m
}

// HTML writes the report of runs as one self-contained page: the plotting
// library and the data are inline, nothing is fetched.
func HTML(w io.Writer, ins []Input) error {
	return BuildPage(ins).Write(w)
}

// Write renders the page.
func (p *Page) Write(w io.Writer) error {
	data, err := json.Marshal(p.charts) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, map[string]any{
		"Page":    p,
		"Lib":     template.JS(strings.ReplaceAll(chartJS, "</script", `<\/script`)),
		"Script":  template.JS(pageJS),
		"Charts":  template.JS(data),
		"Library": ChartLibrary,
	})
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Page.Title}}</title>
<style>
:root { --fg: #222; --muted: #555; --bg: #fff; --line: #ddd; --box: #e4e4e4; --warn-bg: #fff4e0; --warn: #e69500; --link: #0645ad; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --muted: #b4b4b4; --bg: #16181c; --line: #444; --box: #3a3d42; --warn-bg: #3a2a10; --warn: #e6a23c; --link: #8ab4f8; }
}
body { font-family: system-ui, sans-serif; font-size: 16px; margin: 0 auto; max-width: 1320px; padding: 0 1em 3em; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
h1 { font-size: 1.5em; margin: .5em 0 .2em; } h2 { border-bottom: 1px solid var(--line); padding-top: .3em; margin: .5em 0 .5em; } h3 { font-size: 1.05em; margin-top: 1.5em; }
p.runs { margin: .2em 0; }
nav { font-size: .85em; margin: .3em 0; } nav a { margin-right: 1em; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(620px, 100%), 1fr)); gap: 1em; }
figure.chart { margin: 0; border: 1px solid var(--box); border-radius: 4px; padding: .5em; break-inside: avoid; }
figure.chart div.box { position: relative; height: 320px; }
figcaption { font-size: .85em; color: var(--muted); margin-top: .3em; }
.answer { font-size: 1.05em; line-height: 1.45; border-left: 4px solid var(--link); padding: .2em .8em; margin: 1em 0; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0 1em; }
td, th { border: 1px solid var(--line); padding: 2px 6px; text-align: left; vertical-align: top; }
caption { text-align: left; font-size: .9em; color: var(--muted); padding: .3em 0; caption-side: top; }
code, .mono { font-family: ui-monospace, monospace; }
#js-errors { color: #d33; white-space: pre-wrap; }
.warning { background: var(--warn-bg); border-left: 4px solid var(--warn); padding: .3em .6em; }
@media print {
  :root { --fg: #000; --muted: #333; --bg: #fff; --line: #999; --box: #bbb; --warn-bg: #fff; --link: #000; }
  body { max-width: none; font-size: 12pt; }
  details { display: block; } nav { display: none; }
  .charts { grid-template-columns: 1fr; } figure.chart div.box { height: 300px; }
  h2 { break-before: auto; } h2, h3 { break-after: avoid; }
}
</style>
</head>
<body>
<h1>{{.Page.Title}}</h1>
<pre id="js-errors" hidden></pre>
<p class="runs">{{range $i, $r := .Page.Runs}}{{if $i}}; {{end}}<b>{{$r.Name}}</b>: {{len $r.Run.Results}} results{{with $r.Run.Rounds}}, {{.}} rounds{{end}}, {{$r.Run.Environment.Hostname}} ({{$r.Run.Environment.Kernel}}){{end}}.{{with .Page.Warnings}} <a href="#warnings">{{len .}} warning{{if gt (len .) 1}}s{{end}}</a> below the comparison: judge the numbers with {{if gt (len .) 1}}them{{else}}it{{end}}.{{end}}</p>
<nav>{{range .Page.Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}</nav>
{{range $i, $s := .Page.Sections}}
<section id="{{.ID}}" data-section="{{.ID}}">
<h2>{{.Title}}</h2>
{{template "body" .}}
{{range .Subs}}<div class="sub"{{with .ID}} id="{{.}}"{{end}}>
<h3>{{.Title}}</h3>
{{template "body" .}}
</div>
{{end}}</section>
{{if eq $i 0}}{{with $.Page.Warnings}}<div id="warnings">{{range .}}<p class="warning">warning: {{.}}</p>
{{end}}</div>{{end}}{{end}}
{{end}}
<footer><p>Written by cnperf; charts drawn by {{.Library}}, inline in this file: the page needs no network.</p></footer>
<script>{{.Lib}}</script>
<script>window.CNPERF_CHARTS = {{.Charts}};</script>
<script>{{.Script}}</script>
</body>
</html>
{{define "body"}}{{with .Intro}}<p>{{.}}</p>{{end}}
{{if .Charts}}<div class="charts">
{{range .Charts}}<figure class="chart" id="{{.ID}}"><div class="box"><canvas aria-label="{{.Title}}" role="img"></canvas></div>{{with .Note}}<figcaption>{{.}}</figcaption>{{end}}</figure>
{{end}}</div>{{end}}
{{with .Answer}}<p class="answer" id="answer"><b>In short</b>, from the verdicts above (a difference or a place only where shown, with its 95 % interval): {{range $i, $s := .}}{{if $i}} {{end}}{{$s}}{{end}}</p>{{end}}
{{range .Tables}}{{if .Folded}}<details><summary>{{.Caption}}</summary><table>{{else}}<table>{{with .Caption}}<caption>{{.}}</caption>{{end}}{{end}}
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{if .Folded}}</details>{{end}}
{{end}}
{{range .Notes}}<p>{{.}}</p>{{end}}{{end}}
`))
