package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/cnperf/cnperf/internal/result"
	kit "github.com/cnperf/cnperf/internal/section"
	"github.com/cnperf/cnperf/internal/stats"
)

// OpenMetrics writes runs' summaries in the OpenMetrics 1.0 text format,
// which is also valid Prometheus text exposition (0.0.4): every family a
// gauge, no timestamps, no UNIT lines, "# EOF" last (a comment to a
// Prometheus text parser). For a node_exporter textfile collector, a
// Pushgateway (curl --data-binary @FILE), or promtool.
//
// One sample per cell and figure: cnperf_<figure> (the figure's key with
// every character outside [a-z0-9_] made "_": cnperf_transactions_per_s,
// cnperf_latency_us_p99_9) is the cell's median over its rounds, in the
// JSON's unit; cnperf_<figure>_ci_low and _ci_high bound it (95 %, where
// the run had 2 rounds or more). Every sample carries the cell's labels:
// run_id, network, workload, placement, lb, services, step, backend.
// cnperf_vs_baseline_ratio (and cnperf_vs_replica_ratio) is a figure's
// ratio to the baseline in the same placement (to the lab's replica),
// labelled with the figure, its verdict (differs, equivalent, undecided)
// and direction (better, worse), with _ci_low, _ci_high and _p beside it.
// cnperf_run_info (1) labels each run with its environment.
func OpenMetrics(w io.Writer, ins []Input) error {
	var fams []*omFamily
	byName := map[string]*omFamily{}
	family := func(name, help string) *omFamily {
		f := byName[name]
		if f == nil {
			f = &omFamily{name: name, help: help}
			byName[name] = f
			fams = append(fams, f)
		}
		return f
	}
	ids := runIDs(ins)
	for i, in := range ins {
		run := in.Run
		env := run.Environment
		family("cnperf_run_info", "a cnperf run: its id, file, version and the environment its figures are only comparable with").
			add(omLabels{{"run_id", ids[i]}, {"file", in.Name}, {"cnperf_version", run.Version}, {"hostname", env.Hostname},
				{"kernel", env.Kernel}, {"cpu_model", env.CPUModel}, {"cpus", count0(env.CPUs)}, {"backend", backendName(env.Backend)},
				{"rounds", count0(run.Rounds)}, {"incomplete", fmt.Sprint(run.Incomplete)}}, 1)
		family("cnperf_run_start_time_seconds", "when the run started, seconds since the epoch").
			add(omLabels{{"run_id", ids[i]}}, float64(run.StartedAt.Unix()))
		for _, s := range kit.Summaries(run) {
			f, _ := describe(s.Cell.Workload, s.Figure)
			name := "cnperf_" + metricName(s.Figure)
			what := fmt.Sprintf("%s (%s", s.Figure, f.Label)
			if f.Better != "" {
				what += ", " + string(f.Better) + " is better"
			}
			what += ")"
			cell := cellLabels(ids[i], s.Cell)
			family(name, what+": the cell's median over its rounds").add(cell, s.Median)
			if s.CILevel > 0 {
				family(name+"_ci_low", what+": low end of the median's 95 % interval").add(cell, s.CILow)
				family(name+"_ci_high", what+": high end of the median's 95 % interval").add(cell, s.CIHigh)
			}
			for _, c := range []struct {
				vs   string
				cmp  *result.Comparison
				help string
			}{
				{"baseline", s.VsBaseline, "ratio of the figure to the baseline's in the same placement (geometric mean of the per-round ratios)"},
				{"replica", s.VsReplica, "ratio of the figure of a real backend's cell to the lab's replica of its network (geometric mean of the per-round ratios)"},
			} {
				if c.cmp == nil {
					continue
				}
				ls := append(append(omLabels{}, cell...), omLabel{"figure", s.Figure}, omLabel{"better", string(f.Better)},
					omLabel{"verdict", stats.VerdictOf(*c.cmp)}, omLabel{"direction", c.cmp.Direction})
				base := "cnperf_vs_" + c.vs + "_ratio"
				family(base, c.help+"; above 1 is more of the figure, which is better where better=higher").add(ls, c.cmp.Ratio)
				if c.cmp.CILevel > 0 {
					family(base+"_ci_low", "low end of the ratio's 95 % interval").add(ls, c.cmp.CILow)
					family(base+"_ci_high", "high end of the ratio's 95 % interval").add(ls, c.cmp.CIHigh)
					family(base+"_p", "p-value of the ratio's test ("+c.cmp.Test+")").add(ls, c.cmp.P)
				}
			}
		}
	}
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n", f.name, escapeHelp(f.help), f.name)
		for _, s := range f.samples {
			fmt.Fprintf(bw, "%s%s %s\n", f.name, s.labels, omValue(s.value))
		}
	}
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

type omFamily struct {
	name, help string
	samples    []omSample
	seen       map[string]bool
}

type omSample struct {
	labels string
	value  float64
}

// add appends a sample; a second one with the same labels (a cell twice
// in one run file) is dropped: an exposition must not repeat a series.
func (f *omFamily) add(ls omLabels, v float64) {
	text := ls.String()
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if f.seen[text] {
		return
	}
	f.seen[text] = true
	f.samples = append(f.samples, omSample{text, v})
}

type omLabel struct{ name, value string }

type omLabels []omLabel

// String prints {a="x",b="y"}, values escaped as both formats want.
func (ls omLabels) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name + `="` + labelEscaper.Replace(l.value) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func cellLabels(runID string, k result.CellKey) omLabels {
	return omLabels{{"run_id", runID}, {"network", k.Network}, {"workload", k.Workload}, {"placement", k.Placement},
		{"lb", k.LB}, {"services", count0(k.Services)}, {"step", k.Step}, {"backend", backendName(k.Backend)}}
}

// metricName makes a figure key a metric name's tail: lower case, every
// character outside [a-z0-9_] an underscore ("latency_us.p99.9" is
// "latency_us_p99_9").
func metricName(key string) string {
	b := []byte(strings.ToLower(key))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// omValue prints a sample's value (Decimal; both formats read it).
func omValue(v float64) string {
	if s := Decimal(v); s != "" {
		return s
	}
	return "NaN"
}
