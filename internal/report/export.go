package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// The exports (CSV, OpenMetrics, NDJSON) share what is here: the run id
// that labels every row, sample and document, numbers rounded to what a
// measurement can mean, and the figures' descriptions. docs/results.md,
// "Exports", describes each file.

// Outputs are the files `cnperf report` and `cnperf run` write beside the
// table; an empty path is an output not asked for.
type Outputs struct {
	HTML        string // --html FILE
	CSV         string // --csv DIR
	OpenMetrics string // --openmetrics FILE
	NDJSON      string // --ndjson FILE
}

// Check applies the output rule (package cli) to the outputs before any
// work: inputs are the paths the command reads, force lets an existing
// file of another kind be replaced.
func (o Outputs) Check(inputs []string, force bool) error {
	return cli.CheckOutputs(inputs, force, o.List()...)
}

// CheckOutDir and CheckOutFile refuse, before any work, an output path
// that cannot be written (package cli has them, for every command).
var (
	CheckOutDir  = cli.CheckOutDir
	CheckOutFile = cli.CheckOutFile
)

// Write writes every output asked for and returns one line per output
// for the user ("csv: 6 files in csv/").
func (o Outputs) Write(ins []Input) ([]string, error) {
	var lines []string
	if o.HTML != "" {
		if err := writeFile("--html", o.HTML, func(w io.Writer) error { return HTML(w, ins) }); err != nil {
			return lines, err
		}
		lines = append(lines, "html: "+o.HTML)
	}
	if o.CSV != "" {
		files, err := WriteCSV(o.CSV, ins)
		if err != nil {
			return lines, err
		}
		lines = append(lines, fmt.Sprintf("csv: %d files in %s", len(files), o.CSV))
	}
	if o.OpenMetrics != "" {
		if err := writeFile("--openmetrics", o.OpenMetrics, func(w io.Writer) error { return OpenMetrics(w, ins) }); err != nil {
			return lines, err
		}
		lines = append(lines, "openmetrics: "+o.OpenMetrics)
	}
	if o.NDJSON != "" {
		if err := writeFile("--ndjson", o.NDJSON, func(w io.Writer) error { return NDJSON(w, ins) }); err != nil {
			return lines, err
		}
		lines = append(lines, "ndjson: "+o.NDJSON)
	}
	return lines, nil
}

// writeFile writes path whole or not at all (cli.WriteFile).
func writeFile(flagName, path string, write func(io.Writer) error) error {
	return cli.WriteFile(flagName, path, write)
}

var deploySuffix = regexp.MustCompile(`s[0-9]+$`)

// RunID names a run in the exports: the lab's run id (the id in its
// namespaces' names, cnperf-ID-...: the first deployment's id, which the
// others extend with s2, s3...) where the run built labs, otherwise its
// start time as 20060102T150405Z.
func RunID(run *result.Run) string {
	for _, b := range run.Builds {
		if id := deploySuffix.ReplaceAllString(b.ID, ""); id != "" {
			return id
		}
	}
	return run.StartedAt.UTC().Format("20060102T150405Z")
}

// runIDs names each input: its RunID, made unique with the file's name
// where two inputs share one.
func runIDs(ins []Input) []string {
	ids := make([]string, len(ins))
	seen := map[string]int{}
	for i, in := range ins {
		ids[i] = RunID(in.Run)
		seen[ids[i]]++
	}
	for i, in := range ins {
		if seen[ids[i]] > 1 {
			ids[i] += "/" + in.Name
		}
	}
	return ids
}

// SignificantDigits is how many significant digits the exports keep: a
// measurement repeated is rarely the same to 1 part in 10^4, and the binary
// noise of a computed value (2.0499999999999545) is gone.
const SignificantDigits = 6

// Decimal prints v rounded to SignificantDigits, without an exponent:
// 2.0499999999999545 is 2.05, 9412345678.9 is 9412350000, 1.5e-07 is
// 0.00000015. Integers below 10^15 print whole.
func Decimal(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return ""
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', SignificantDigits, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// rounded is v as Decimal prints it, for JSON.
func rounded(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', SignificantDigits, 64), 64)
	return r
}

// describe is the declared figure of a workload's summary: its label, unit
// and direction; a figure the workload does not declare (summarized by
// default, or from another version) is looked up among the common ones.
func describe(wl, key string) (result.Figure, bool) {
	if f, ok := kit.FigureOf(wl, key); ok {
		return f, true
	}
	for _, f := range stats.DefaultFigures {
		if f.Key == key {
			return f, true
		}
	}
	return result.Figure{Key: key, Label: key}, false
}

// backendName is a result's backend as the exports name it: "lab" for the
// local namespace lab (absent in the JSON).
func backendName(b string) string {
	if b == "" {
		return "lab"
	}
	return b
}

// metricLeaves lists every number of a result's metrics by its figure key
// (Metrics.Value's names: "latency_us.p99", "cpu.cell_ns_per_byte",
// "extra.saturated"), histograms and per-flow figures left out, and the
// machine's speed around the cell as machine_speed.share, .relative,
// .load1.
func metricLeaves(r result.Result) [][2]string {
	var out [][2]string
	for _, kv := range flatten(r.Metrics) {
		if strings.HasPrefix(kv[0], "histograms.") {
			continue
		}
		out = append(out, kv)
	}
	if ms := r.MachineSpeed; ms != nil {
		for _, kv := range flatten(ms) {
			switch kv[0] {
			case "share", "relative", "load1":
				out = append(out, [2]string{"machine_speed." + kv[0], kv[1]})
			}
		}
	}
	return out
}
