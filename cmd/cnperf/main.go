// Command cnperf builds container networks for real in the Linux kernel,
// runs the classic studies' workloads across them and reports the comparison.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cnperf/cnperf/internal/agentimage"
	"github.com/cnperf/cnperf/internal/backend"
	"github.com/cnperf/cnperf/internal/bpfcost"
	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/enginebench"
	"github.com/cnperf/cnperf/internal/exitcode"
	"github.com/cnperf/cnperf/internal/kubelocal"
	"github.com/cnperf/cnperf/internal/labbench"
	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/suite"
	"github.com/cnperf/cnperf/internal/svc"
	"github.com/cnperf/cnperf/internal/workload"

	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// root is cnperf's command tree (package cli): every command, its
// sub-commands, flags and help.
var root = &cli.Command{Name: "cnperf", Summary: "which container network is fastest for my load, and what does it cost?",
	Long: "Flags go before or after a command's arguments, as --flag or -flag; -- ends them. `cnperf help COMMAND`\n" +
		"is `cnperf COMMAND --help`; `cnperf --version` prints the version. Exit status: 0 ok, 1 failure, 2 bad usage\n" +
		"(one line, nothing done), 3 a regression (compare), 4 some cells failed (run), 5 the gate could not decide."}

func init() {
	kube := kubelocal.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Interrupted: interruptible}
	root.Subs = []*cli.Command{
		{Name: "run", Summary: "build networks in a local lab, run workloads, print the comparison and write JSON", Run: cmdRun},
		{Name: "networks", Summary: "list the networks and whether this machine can build them", Run: cmdNetworks},
		{Name: "workloads", Summary: "list the workloads", Run: cmdWorkloads},
		{Name: "lab", Summary: "build one network and keep it up for other tools (iperf3, sockperf, tcpdump)", Run: cmdLab},
		{Name: "suites", Summary: "list the presets `cnperf run --suite NAME` runs", Run: cmdSuites},
		{Name: "report", Args: "FILE...", Summary: "print the comparison table of results JSON files", Run: cmdReport},
		{Name: "recommend", Args: "[FILE]", Summary: "rank the networks of a results file for a workload profile, with the reasons; given no file, measure first", Run: cmdRecommend},
		{Name: "compare", Args: "OLD.json NEW.json", Summary: "compare two results files: what changed, with intervals and verdicts", Long: compareLong, Run: cmdCompare},
		loadCommand(),
		{Name: "bench", Summary: "measure cnperf itself", Subs: []*cli.Command{
			labbench.Command(interruptible),
			enginebench.Command(interruptible, version),
			{Name: "bpf", Summary: "each eBPF program's runs and run time over an interval (what a datapath's programs cost)", Run: func(c *cli.Ctx) error { return bpfcost.Run(c, os.Stdout, interruptible) }}}},
		agentimage.Command(interruptible),
		{Name: "clean", Summary: "remove what killed runs left behind (namespaces, processes, state)", Run: cmdClean},
		kubelocal.Command(kube),
		{Name: "agent", Summary: "(internal) the in-pod agent the coordinator drives", Run: cmdAgent},
		{Name: "tund", Summary: "(internal) the user-space tunnel daemon of flannel-udp and weave", Run: cmdTund},
		{Name: "version", Summary: "print the version, the commit it was built from and the Go that built it (also --version)", Run: cmdVersion},
	}
	root.Subs = append(root.Subs, cli.CompletionCommand(root, cli.Values{
		"networks": netmode.Names, "network": netmode.Names, "workloads": workload.Names, "suite": suite.Names,
		"backend": backend.Names, "lb": svc.Names}, os.Stdout))
}

// interruptible is the context of a command that builds or runs
// something: cancelled by Ctrl-C, SIGTERM, or a hang-up of its terminal,
// so that it tears down what it built.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

func main() {
	// A closed stdout or stderr (`cnperf run | head`) must not kill a run
	// before it tears its lab down: with SIGPIPE caught, a write to a
	// broken pipe fails instead (and exec'd tools get the default back).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	os.Exit(cli.Main(root, args, os.Stdout, os.Stderr))
}

// dispatch runs a command line as main does, returning its error.
func dispatch(args ...string) error { return cli.Execute(root, args, os.Stdout) }

// exitCode lets a command choose its exit status.
type exitCode = exitcode.Code

func cmdVersion(c *cli.Ctx) error {
	if _, err := c.Parse(); err != nil {
		return err
	}
	cli.WriteVersion(os.Stdout, "cnperf", version)
	return nil
}
