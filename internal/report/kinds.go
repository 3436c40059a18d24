package report

import (
	"bytes"
	"maps"
	"slices"

	"github.com/cnperf/cnperf/internal/cli"
)

// The kinds of file cnperf's reports write, as the output rule (package
// cli) recognises an existing one it may replace.
var (
	// ResultsKind: cnperf run's, load's and recommend's results.
	ResultsKind = cli.SchemaJSON("a cnperf results file", "cnperf/run/")
	// HTMLKind: every page has the title "cnperf report..." near its top.
	HTMLKind = cli.Containing("a cnperf HTML report", "<!DOCTYPE html>", "<title>cnperf report")
	// CSVKind: every file of --csv begins with the columns file,run_id.
	CSVKind         = cli.Prefixed("a cnperf CSV file", "file,run_id,")
	OpenMetricsKind = cli.Prefixed("a cnperf OpenMetrics file", "# HELP cnperf_")
	NDJSONKind      = cli.Kind{Name: "a cnperf NDJSON export", Is: cli.Head(func(head []byte) bool {
		return bytes.HasPrefix(head, []byte(`{"index":`)) && bytes.Contains(head, []byte(`"schema":"`+ExportSchema+`"`))
	})}
	JUnitKind   = cli.Containing("a cnperf JUnit file", "<?xml", `<testsuites name="cnperf"`)
	CompareKind = cli.SchemaJSON("a cnperf comparison (compare --json)", "cnperf/compare/")
	HgrmKind    = cli.Prefixed("an HdrHistogram .hgrm file", "Value\tPercentile")
)

// List is the outputs asked for, as the output rule checks them.
func (o Outputs) List() []cli.Output {
	return []cli.Output{
		{Flag: "--html", Path: o.HTML, Example: "report.html", Kind: HTMLKind},
		{Flag: "--csv", Path: o.CSV, Kind: CSVKind, Dir: true, Names: slices.Sorted(maps.Keys(CSVColumns))},
		{Flag: "--openmetrics", Path: o.OpenMetrics, Example: "cnperf.prom", Kind: OpenMetricsKind},
		{Flag: "--ndjson", Path: o.NDJSON, Example: "cnperf.ndjson", Kind: NDJSONKind},
	}
}
