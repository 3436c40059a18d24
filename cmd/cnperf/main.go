// Command cnperf builds container networks for real in the Linux kernel,
// runs the classic studies' workloads across them and reports the comparison.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cnperf/cnperf/internal/exitcode"

	_ "github.com/cnperf/cnperf/internal/netmode/all"
	_ "github.com/cnperf/cnperf/internal/workload/all"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

type command struct {
	name, summary string
	run           func(args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"run", "build networks in a local lab, run workloads, print the comparison and write JSON", cmdRun},
		{"networks", "list the networks and whether this machine can build them", cmdNetworks},
		{"workloads", "list the workloads", cmdWorkloads},
		{"lab", "build one network and keep it up for other tools (iperf3, sockperf, tcpdump)", cmdLab},
		{"suites", "list the presets `cnperf run --suite NAME` runs", cmdSuites},
		{"report", "print the comparison table of a results JSON file", cmdReport},
		{"recommend", "rank the networks of a results file for a workload profile, with the reasons", cmdRecommend},
		{"compare", "compare two results files: what changed, with intervals and verdicts", cmdCompare},
		{"load", "run the load engine (http_rate, http_qps, tcp_rate) against any server, or serve one", cmdLoad},
		{"bench", "measure cnperf itself: `bench lab` builds many pods, pings each, tears them down, timed", cmdBench},
		{"image", "build the agent image --backend kubernetes runs: `image build` writes an archive, `image push REF` sends it to a registry", cmdImage},
		{"clean", "remove what killed runs left behind (namespaces, processes, state)", cmdClean},
		{"cluster", "a real Kubernetes cluster on this machine: `cluster up [--nodes N] | down | status | kubectl ...`", cmdCluster},
		{"agent", "(internal) the in-pod agent the coordinator drives", cmdAgent},
		{"tund", "(internal) the user-space tunnel daemon of flannel-udp and weave", cmdTund},
		{"version", "print the version", cmdVersion},
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, "cnperf %s: which container network is fastest for my load, and what does it cost?\n\nusage: cnperf COMMAND [flags]\n\ncommands:\n", version)
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\n`cnperf COMMAND -h` shows a command's flags.\n")
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
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		usage()
		return
	}
	for _, c := range commands {
		if c.name == name {
			if err := c.run(os.Args[2:]); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return
				}
				fmt.Fprintln(os.Stderr, "cnperf "+name+": "+err.Error())
				var ec exitCode
				if errors.As(err, &ec) {
					os.Exit(int(ec))
				}
				os.Exit(1)
			}
			return
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	fmt.Fprintf(os.Stderr, "cnperf: unknown command %q; use one of %s\n", name, strings.Join(names, ", "))
	os.Exit(2)
}

// exitCode lets a command choose its exit status.
type exitCode = exitcode.Code

// newFlags makes a flag set whose errors come back to the caller as one line.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("cnperf "+name, flag.ContinueOnError)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // a bad flag gets one line, not the whole usage
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Printf("usage of %s:\n", fs.Name())
			fs.PrintDefaults()
			return err
		}
		// the flag package echoes what it was given: keep it on one line
		msg := strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(err.Error())
		return fmt.Errorf("%s; see `%s -h`", msg, fs.Name())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; flags start with --, see `%s -h`", fs.Arg(0), fs.Name())
	}
	return nil
}

func cmdVersion(args []string) error {
	if err := parseFlags(newFlags("version"), args); err != nil {
		return err
	}
	fmt.Println("cnperf", version)
	return nil
}
