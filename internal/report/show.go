package report

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/result"
)

// ShowOptions are `cnperf report`'s: --hgrm, --ratio, the files it
// writes (--html, --csv, --openmetrics, --ndjson) and --pool.
type ShowOptions struct {
	Hgrm, Ratio string
	Outputs     Outputs
	Pool        bool
	// Force lets the outputs replace existing files of other kinds.
	Force bool
}

// Show reads results files and writes what `cnperf report` shows on w:
// each run's table (or, with Ratio, two workloads compared), and the
// files asked for.
func Show(w io.Writer, paths []string, o ShowOptions) error {
	// the output rule: none of the files read, nor another output, nor a
	// file of another kind (the .hgrm files are checked as they are named)
	outs := append(o.Outputs.List(), cli.Output{Flag: "--hgrm", Path: o.Hgrm, Kind: HgrmKind, Dir: true, Match: "*.hgrm"})
	if err := cli.CheckOutputs(paths, o.Force, outs...); err != nil {
		return exitcode.With(err, exitcode.Usage)
	}
	ratioA, ratioB, ratioOK := strings.Cut(o.Ratio, ":")
	if o.Ratio != "" && (!ratioOK || ratioA == "" || ratioB == "") {
		return exitcode.With(fmt.Errorf("--ratio %q: want two workloads as A:B, e.g. tcp_stream:iperf3_tcp", o.Ratio), exitcode.Usage)
	}
	ins, err := ReadRuns(paths)
	if err != nil {
		return err
	}
	if o.Hgrm != "" {
		// the .hgrm files, now that their names are known: still before
		// anything is written
		var names []string
		for _, in := range ins {
			names = append(names, HgrmNames(in.Run)...)
		}
		if err := cli.CheckOutputs(paths, o.Force, cli.Output{Flag: "--hgrm", Path: o.Hgrm, Kind: HgrmKind, Dir: true, Names: names}); err != nil {
			return exitcode.With(err, exitcode.Usage)
		}
	}
	if o.Pool {
		run, lines, err := Pool(ins)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "pooled %d files (each file's rounds follow the previous file's; cells are paired by round within each file only):\n", len(ins))
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintln(w)
		ins = []Input{{Name: "pooled", Run: run}}
		paths = []string{"pooled"}
	}
	if o.Ratio != "" {
		for _, in := range ins {
			if err := Ratios(w, in.Run, ratioA, ratioB); err != nil {
				return err
			}
		}
		return nil
	}
	for i, in := range ins {
		if len(ins) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "=== %s ===\n", paths[i])
		}
		Table(w, in.Run)
	}
	if o.Hgrm != "" {
		for _, in := range ins {
			files, err := WriteHgrm(o.Hgrm, in.Run, o.Force)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %d .hgrm files to %s\n", len(files), o.Hgrm)
		}
	}
	return WriteOutputs(w, o.Outputs, ins)
}

// ReadRuns reads run files; a missing one is named with the fix.
func ReadRuns(paths []string) ([]Input, error) {
	var ins []Input
	for _, p := range paths {
		run, err := result.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; name a results file written by cnperf run (cnperf-results/run-....json)", p)
		}
		if err != nil {
			return nil, err
		}
		ins = append(ins, NewInput(p, run))
	}
	return ins, nil
}

// WriteOutputs writes the files of `report` and `run` that were asked
// for (--html, --csv, --openmetrics, --ndjson), saying so on w.
func WriteOutputs(w io.Writer, out Outputs, ins []Input) error {
	lines, err := out.Write(ins)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return err
}

// OutputFlags registers the flags of the files `cnperf report` and `cnperf
// run` (verb) write beside the table, and returns where they land.
func OutputFlags(fs *flag.FlagSet, verb string) *Outputs {
	o := &Outputs{}
	if verb == "run" {
		fs.StringVar(&o.HTML, "html", "", "also write the report as a self-contained HTML page (`FILE`; see cnperf report --html)")
		fs.StringVar(&o.CSV, "csv", "", "also write the results as CSV files into this folder (`DIR`; see cnperf report --csv)")
		fs.StringVar(&o.OpenMetrics, "openmetrics", "", "also write the summaries as OpenMetrics / Prometheus text into this `FILE` (see cnperf report --openmetrics)")
		fs.StringVar(&o.NDJSON, "ndjson", "", "also write the summaries as NDJSON for an Elasticsearch/OpenSearch _bulk request into this `FILE` (see cnperf report --ndjson)")
		return o
	}
	fs.StringVar(&o.HTML, "html", "", "also write a self-contained HTML page with the charts to `FILE` (several files are overlaid)")
	fs.StringVar(&o.CSV, "csv", "", "also write one CSV per kind of record (results, params, summaries, skipped, environment; fixed columns, docs/results.md) into this folder (`DIR`)")
	fs.StringVar(&o.OpenMetrics, "openmetrics", "", "also write the summaries as OpenMetrics / Prometheus text (one sample per cell and figure) into this `FILE`")
	fs.StringVar(&o.NDJSON, "ndjson", "", "also write the summaries as NDJSON for an Elasticsearch/OpenSearch _bulk request (one document per cell and figure) into this `FILE`")
	return o
}
