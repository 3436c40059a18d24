package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/cleanup"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/plan"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

func cmdNetworks(args []string) error {
	fs := newFlags("networks")
	verbose := fs.Bool("v", false, "also list each network's options (--mode-opt key=value)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "network\tplacements\there\tdescription")
	for _, n := range netmode.Names() {
		m, _ := netmode.Get(n)
		var ps []string
		for _, p := range m.Placements() {
			ps = append(ps, string(p))
		}
		status := "yes"
		if err := netmode.Check(m); err != nil {
			status = "no: " + err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, strings.Join(ps, ","), status, m.Summary())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *verbose {
		fmt.Println()
		writeNetworkOptions(os.Stdout)
	}
	return nil
}

// writeNetworkOptions lists the mode options: the ones every network
// takes, then each network's own.
func writeNetworkOptions(w io.Writer) {
	fmt.Fprintln(w, "options (--mode-opt key=value):")
	fmt.Fprintln(w, "  every network:")
	option.Describe(w, "    ", netmode.Common)
	var plain []string
	for _, n := range netmode.Names() {
		m, _ := netmode.Get(n)
		if len(m.Options()) == 0 {
			plain = append(plain, n)
			continue
		}
		fmt.Fprintf(w, "  %s:\n", n)
		option.Describe(w, "    ", m.Options())
	}
	if len(plain) > 0 {
		fmt.Fprintf(w, "  none of their own: %s\n", strings.Join(plain, ", "))
	}
}

func cmdWorkloads(args []string) error {
	fs := newFlags("workloads")
	verbose := fs.Bool("v", false, "also each workload's options (its flags) and the figures it reports")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tproto\tdefault size\tdescription")
	for _, n := range workload.Names() {
		w, _ := workload.Get(n)
		var p workload.Params
		w.Defaults(&p)
		fmt.Fprintf(tw, "%s\t%s\t%d B\t%s\n", n, w.Proto(), p.MessageSize, w.Summary())
	}
	for _, n := range workload.MeasureNames() {
		m, _ := workload.GetMeasure(n)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, "-", "-", m.Summary)
	}
	if err := tw.Flush(); err != nil || !*verbose {
		return err
	}
	for _, n := range workload.Names() {
		w, _ := workload.Get(n)
		fmt.Printf("\n%s\n  figures:\n", n)
		for _, f := range w.Figures() {
			line := fmt.Sprintf("    %-22s %-14s %s is better", f.Key, f.Label, f.Better)
			if f.Ratio {
				line += ", with its ratio to baseline"
			}
			fmt.Println(line)
		}
		if opts := workload.OptionsOf(w); len(opts) > 0 {
			fmt.Println("  options (flags of cnperf run):")
			option.Describe(os.Stdout, "    --", opts)
		} else {
			fmt.Println("  options: none")
		}
	}
	return nil
}

func cmdReport(args []string) error {
	fs := newFlags("report FILE...")
	hgrm := fs.String("hgrm", "", "also write every result's latency distribution as HdrHistogram .hgrm text into this folder")
	ratio := fs.String("ratio", "", "instead of the table, compare two workloads run side by side: A:B (e.g. tcp_stream:iperf3_tcp)")
	html := fs.String("html", "", "also write a self-contained HTML page with the charts (several files are overlaid)")
	csvDir := fs.String("csv", "", "also write one CSV per kind of record (results per workload, summaries, skipped, environment) into this folder")
	pool := fs.Bool("pool", false, "pool the rounds of the same cells across the files into one run (each file's rounds renumbered after the previous file's; cells paired by round within each file only) and recompute every verdict")
	var paths []string
	rest := args
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		paths, rest = append(paths, rest[0]), rest[1:]
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("name a results file: cnperf report cnperf-results/run-....json")
	}
	if *html != "" {
		if err := checkOutFile("--html", *html); err != nil {
			return err
		}
	}
	ins, err := readRuns(paths)
	if err != nil {
		return err
	}
	if *pool {
		run, lines, err := report.Pool(ins)
		if err != nil {
			return err
		}
		fmt.Printf("pooled %d files (each file's rounds follow the previous file's; cells are paired by round within each file only):\n", len(ins))
		for _, l := range lines {
			fmt.Println("  " + l)
		}
		fmt.Println()
		ins = []report.Input{{Name: "pooled", Run: run}}
		paths = []string{"pooled"}
	}
	if *ratio != "" {
		a, b, ok := strings.Cut(*ratio, ":")
		if !ok || a == "" || b == "" {
			return fmt.Errorf("--ratio %q: want two workloads as A:B, e.g. tcp_stream:iperf3_tcp", *ratio)
		}
		for _, in := range ins {
			if err := report.Ratios(os.Stdout, in.Run, a, b); err != nil {
				return err
			}
		}
		return nil
	}
	for i, in := range ins {
		if len(ins) > 1 {
			if i > 0 {
				fmt.Println()
			}
			fmt.Printf("=== %s ===\n", paths[i])
		}
		report.Table(os.Stdout, in.Run)
	}
	if *hgrm != "" {
		for _, in := range ins {
			files, err := report.WriteHgrm(*hgrm, in.Run)
			if err != nil {
				return err
			}
			fmt.Printf("wrote %d .hgrm files to %s\n", len(files), *hgrm)
		}
	}
	return writeOutputs(*html, *csvDir, ins)
}

// readRuns reads run files; a missing one is named with the fix.
func readRuns(paths []string) ([]report.Input, error) {
	var ins []report.Input
	for _, p := range paths {
		run, err := result.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; name a results file written by cnperf run (cnperf-results/run-....json)", p)
		}
		if err != nil {
			return nil, err
		}
		ins = append(ins, report.NewInput(p, run))
	}
	return ins, nil
}

// writeOutputs writes the HTML page and the CSV files of `report` and
// `run` when asked for.
func writeOutputs(html, csvDir string, ins []report.Input) error {
	if html != "" {
		var b bytes.Buffer
		if err := report.HTML(&b, ins); err != nil {
			return err
		}
		if err := os.WriteFile(html, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--html %s: %v; choose a file in a writable folder", html, err)
		}
		fmt.Printf("html: %s\n", html)
	}
	if csvDir != "" {
		files, err := report.WriteCSV(csvDir, ins)
		if err != nil {
			return err
		}
		fmt.Printf("csv: %d files in %s\n", len(files), csvDir)
	}
	return nil
}

// checkOutFile refuses, before any work, an output path whose folder does
// not exist or that is not a regular file.
func checkOutFile(flagName, path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: folder %s does not exist; create it first or choose another path", flagName, path, dir)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file; choose a file path such as report.html", flagName, path)
	}
	return nil
}

func cmdClean(args []string) error {
	fs := newFlags("clean")
	force := fs.Bool("force", false, "also remove the labs of runs that are still going")
	id := fs.String("id", "", "only this run's leftovers (the id in its namespace names, cnperf-ID-...)")
	var help []string
	for _, i := range backend.All() {
		if i.Cleaner != nil {
			help = append(help, i.Name+" ("+i.CleanSummary+")")
		}
	}
	be := fs.String("backend", backend.Names()[0], strings.Join(help, ", "))
	flags := backendFlags(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	info, err := backend.Get(*be)
	if err != nil || info.Cleaner == nil {
		var names []string
		for _, i := range backend.All() {
			if i.Cleaner != nil {
				names = append(names, i.Name)
			}
		}
		return fmt.Errorf("clean --backend %q: use %s", *be, plan.OrList(names))
	}
	values, err := plan.BackendFlags([]backend.Info{info}, setValues(fs, flags), "clean ")
	if err != nil {
		return err
	}
	return cleanup.Run(context.Background(), info.Cleaner, cleanup.Request{ID: *id, Force: *force, Flags: values, Out: os.Stdout})
}

func cmdAgent(args []string) error {
	fs := newFlags("agent")
	listen := fs.String("listen", "", "control address: unix:/path.sock or tcp:host:port")
	parent := fs.Int("parent", 0, "exit when this process is gone")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *listen == "" {
		return fmt.Errorf("--listen is required (unix:/path.sock or tcp:host:port)")
	}
	ctx, stop := interruptible()
	defer stop()
	return agent.Serve(ctx, *listen, *parent)
}

func cmdSuites(args []string) error {
	fs := newFlags("suites")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tworkloads\tdescription\tsource")
	for _, n := range suite.Names() {
		s, _ := suite.Get(n)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, strings.Join(s.Workloads, ","), s.Summary, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Println("run one: cnperf run --suite NAME; add --quick for its short version (under 2 minutes)")
	return err
}
