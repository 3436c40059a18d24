// Package catalog lists what cnperf has, for `cnperf networks`,
// `cnperf workloads` and `cnperf suites`: each network with its
// placements and whether this machine can build it, each workload with
// its figures and options, each suite with its source.
package catalog

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/workload"
)

// Networks lists the networks; verbose adds each one's options.
func Networks(w io.Writer, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	if verbose {
		fmt.Fprintln(w)
		NetworkOptions(w)
	}
	return nil
}

// NetworkOptions lists the mode options: the ones every network
// takes, then each network's own.
func NetworkOptions(w io.Writer) {
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

// Workloads lists the workloads and measurements; verbose adds each
// workload's figures and options.
func Workloads(w io.Writer, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tproto\tdefault size\tdescription")
	for _, n := range workload.Names() {
		wl, _ := workload.Get(n)
		var p workload.Params
		wl.Defaults(&p)
		fmt.Fprintf(tw, "%s\t%s\t%d B\t%s\n", n, wl.Proto(), p.MessageSize, wl.Summary())
	}
	for _, n := range workload.MeasureNames() {
		m, _ := workload.GetMeasure(n)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, "-", "-", m.Summary)
	}
	if err := tw.Flush(); err != nil || !verbose {
		return err
	}
	for _, n := range workload.Names() {
		wl, _ := workload.Get(n)
		fmt.Fprintf(w, "\n%s\n  figures:\n", n)
		for _, f := range wl.Figures() {
			line := fmt.Sprintf("    %-22s %-14s %s is better", f.Key, f.Label, f.Better)
			if f.Ratio {
				line += ", with its ratio to baseline"
			}
			fmt.Fprintln(w, line)
		}
		if opts := workload.OptionsOf(wl); len(opts) > 0 {
			fmt.Fprintln(w, "  options (flags of cnperf run):")
			option.Describe(w, "    --", opts)
		} else {
			fmt.Fprintln(w, "  options: none")
		}
	}
	return nil
}

// Suites lists the suites.
func Suites(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tworkloads\tdescription\tsource")
	for _, n := range suite.Names() {
		s, _ := suite.Get(n)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, strings.Join(s.Workloads, ","), s.Summary, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "run one: cnperf run --suite NAME; add --quick for its short version (under 2 minutes); cnperf suites --show NAME prints it as a scenario file")
	return err
}

// ShowSuite writes a built-in suite's scenario file (YAML, its quick:
// block included): `cnperf run -f FILE` runs it as --suite NAME does.
func ShowSuite(w io.Writer, name string) error {
	b, err := suite.File(name)
	if err != nil {
		return exitcode.With(err, exitcode.Usage)
	}
	_, err = w.Write(b)
	return err
}
