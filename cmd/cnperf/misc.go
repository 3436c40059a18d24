package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/backend/docker"
	"github.com/cnperf/cnperf/internal/backend/dockerlab"
	"github.com/cnperf/cnperf/internal/backend/kubernetes"
	"github.com/cnperf/cnperf/internal/dockerengine"
	"github.com/cnperf/cnperf/internal/experiment/neighbours"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc/ebpfsock"
	"github.com/cnperf/cnperf/internal/workload"
)

func cmdNetworks(args []string) error {
	fs := newFlags("networks")
	verbose := fs.Bool("v", false, "also list each network's options (--mode-opt key=value)")
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/networks/v1): every network, whether this machine can build it, its options")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return networksJSON(os.Stdout)
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
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/workloads/v1): every workload and measure, its figures (which way is better), its options")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return workloadsJSON(os.Stdout)
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
	var out report.Outputs
	fs.StringVar(&out.HTML, "html", "", "also write a self-contained HTML page with the charts (several files are overlaid)")
	fs.StringVar(&out.CSV, "csv", "", "also write one CSV per kind of record (results, params, summaries, skipped, environment; fixed columns, docs/results.md) into this folder")
	fs.StringVar(&out.OpenMetrics, "openmetrics", "", "also write the summaries as OpenMetrics / Prometheus text (one sample per cell and figure) into this file")
	fs.StringVar(&out.NDJSON, "ndjson", "", "also write the summaries as NDJSON for an Elasticsearch/OpenSearch _bulk request (one document per cell and figure) into this file")
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
	if err := out.Check(); err != nil {
		return usageError{err}
	}
	if *hgrm != "" {
		if err := report.CheckOutDir("--hgrm", *hgrm); err != nil {
			return usageError{err}
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
	return writeOutputs(out, ins)
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

// writeOutputs writes the files of `report` and `run` that were asked for
// (--html, --csv, --openmetrics, --ndjson).
func writeOutputs(out report.Outputs, ins []report.Input) error {
	lines, err := out.Write(ins)
	for _, l := range lines {
		fmt.Println(l)
	}
	return err
}

// usageError is a bad argument found before any work: exit 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func cmdClean(args []string) error {
	fs := newFlags("clean")
	force := fs.Bool("force", false, "also remove the labs of runs that are still going")
	id := fs.String("id", "", "only this run's leftovers (the id in its namespace names, cnperf-ID-...)")
	be := fs.String("backend", "lab", "lab (namespaces, processes, cgroups, state folders; also docker-lab's engines, which live in them), docker (containers and networks labelled cnperf.run on the engine at DOCKER_HOST or the current Docker context, and agent images of other cnperf binaries) or kubernetes (namespaces labelled cnperf.run on the cluster --kubeconfig names)")
	var kube kubernetes.Options
	fs.StringVar(&kube.Kubeconfig, "kubeconfig", "", "--backend kubernetes: the cluster's kubeconfig (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&kube.Context, "context", "", "--backend kubernetes: the kubeconfig context (default its current one)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *be != kubernetes.Name && (kube.Kubeconfig != "" || kube.Context != "") {
		return errors.New("--kubeconfig and --context apply to clean --backend kubernetes; drop them or add --backend kubernetes")
	}
	switch *be {
	case "lab", dockerlab.Name: // docker-lab's engines live in a lab: its cgroups, namespaces, folder
	case docker.Name:
		return cleanDocker(*id, *force)
	case kubernetes.Name:
		return cleanKubernetes(kube, *id, *force)
	default:
		return fmt.Errorf("clean --backend %q: use lab, docker, docker-lab or kubernetes", *be)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root to delete network namespaces; run it as root")
	}
	removed, err := lab.CleanRun(*id, *force)
	cleanStaleLocks() // runs killed with -9: their results locks, held by no one
	for _, r := range removed {
		fmt.Printf("removed run %s: %d namespaces\n", r.ID, len(r.Namespaces))
		if cerr := ebpfsock.CleanCgroup(r.ID); cerr != nil && err == nil {
			err = cerr
		}
		if cerr := neighbours.CleanCgroups(r.ID); cerr != nil && err == nil {
			err = cerr
		}
	}
	left, _ := lab.FindLeftovers()
	for _, l := range left {
		if l.Live {
			fmt.Printf("kept run %s: still running (use --force to remove it)\n", l.ID)
		}
	}
	if len(removed) == 0 && err == nil {
		fmt.Println("nothing to clean")
	}
	return err
}

// cleanDocker removes what dead runs left on the Docker engine, by label.
func cleanDocker(id string, force bool) error {
	e, err := dockerengine.New("")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.Negotiate(ctx); err != nil {
		return err
	}
	keep := ""
	if self, err := os.Executable(); err == nil {
		keep, _ = dockerengine.ImageRef(self)
	}
	removed, kept, err := docker.Clean(ctx, e, id, keep, force)
	for _, r := range removed {
		if r.Image != "" {
			fmt.Printf("removed agent image %s (another cnperf binary's)\n", r.Image)
			continue
		}
		fmt.Printf("removed docker run %s: %d containers, %d networks\n", r.Run, r.Containers, r.Networks)
	}
	for _, r := range kept {
		fmt.Printf("kept docker run %s: still running or started elsewhere (use --force to remove it)\n", r.Run)
	}
	if len(removed) == 0 && err == nil {
		fmt.Println("nothing to clean on the docker engine")
	}
	return err
}

// cleanKubernetes deletes the namespaces dead runs left on the cluster, by
// label, and waits until they are gone.
func cleanKubernetes(o kubernetes.Options, id string, force bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := kubernetes.Connect(ctx, o)
	if err != nil {
		return err
	}
	if err := cl.Reachable(ctx); err != nil {
		return err
	}
	removed, kept, err := kubernetes.Clean(ctx, cl, id, force)
	for _, r := range removed {
		fmt.Printf("removed kubernetes run %s: namespaces %s\n", r.Run, strings.Join(r.Namespaces, " "))
	}
	for _, r := range kept {
		fmt.Printf("kept kubernetes run %s: still running or started elsewhere (use --force to remove it)\n", r.Run)
	}
	if len(removed) == 0 && err == nil {
		fmt.Println("nothing to clean on the cluster")
	}
	return err
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
	asJSON := fs.Bool("json", false, "print the list as JSON (cnperf/suites/v1): every suite, its workloads, networks, rounds and cells")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return suitesJSON(os.Stdout)
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
