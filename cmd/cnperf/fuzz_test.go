package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/netmode"
	"github.com/cnperf/cnperf/internal/option"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/result"
	"github.com/cnperf/cnperf/internal/stats"
)

// asksHelp reports whether args hold -h or -help, which print the usage
// (the fuzz targets check errors, not the usage text).
func asksHelp(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "h" || name == "help") {
			return true
		}
	}
	return false
}

// FuzzRunFlags: whatever `cnperf run` is given (arguments separated by
// NUL here), parsing it into a plan never panics, an error is one line,
// and a plan it accepts is one the runner accepts.
func FuzzRunFlags(f *testing.F) {
	for _, args := range [][]string{
		{},
		{"--networks", "vxlan,host-gw", "--workloads", "tcp_rr,tcp_stream", "--repeat", "3"},
		{"--networks", "host", "--workloads", "http_rate", "--rate", "500,2000"},
		{"--networks", "weave", "--mode-opt", "encrypt=aes-gcm"},
		{"--lb", "iptables,ebpf-socket", "--services", "1,100", "--workloads", "tcp_crr"},
		{"--networks", "bridge", "--placement", "same-host,cross-host"},
		{"--suite", "default", "--duration", "1s", "--message-size", "64", "--pin", "0,1"},
		{"--workloads", "startup", "--startup-pods", "5"},
		{"--networks", ",", "--duration", "0"},
		{"--workloads", "tcp_stream", "--direction", "down", "--mtu", "9000"},
		{"--mode-opt", "=", "--mode-opt", "a=b,c"},
		{"--suite", "blocking", "--quick"},
		{"--workloads", "blocking", "--rate", "500", "--connections", "8"},
		{"--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", "none,study"},
		{"--suite", "seed-latency", "--quick", "--tuning", "study-rps"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		if s == "" {
			args = nil
		}
		if asksHelp(args) {
			return
		}
		setup, err := parseRunArgs(args)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("%q: error %q, want one line", args, msg)
			}
			return
		}
		if err := setup.plan.Validate(); err != nil {
			t.Fatalf("%q: parsed, then the plan is refused: %v", args, err)
		}
		if len(setup.plan.Cases) == 0 || len(setup.plan.Workloads) == 0 {
			t.Fatalf("%q: accepted a plan with nothing to run: %+v", args, setup.plan)
		}
	})
}

// FuzzModeOpt: a --mode-opt value with a choice of networks never panics;
// what is accepted is only keys a selected network declares, each value
// one its declaration accepts.
func FuzzModeOpt(f *testing.F) {
	for _, s := range []string{"encrypt=aes-gcm", "controlplane=off", "bogus=1", "a=b,c=d", "=1", "novalue", ",", "vni=42", "mtu=1450,,", "k==v", "encrypt="} {
		f.Add(uint8(0), s)
		f.Add(uint8(5), s)
	}
	networks := []string{"vxlan", "weave", "calico-bgp", "flannel-udp", "host-gw", "ebpf", "bridge", "docker-overlay"}
	f.Fuzz(func(t *testing.T, pick uint8, s string) {
		var nets []string
		for i, n := range networks {
			if pick&(1<<i) != 0 {
				nets = append(nets, n)
			}
		}
		if len(nets) == 0 {
			nets = []string{"vxlan"}
		}
		args := []string{"--networks", strings.Join(nets, ","), "--mode-opt", s}
		setup, err := parseRunArgs(args)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") {
				t.Fatalf("%q: error %q, want one line", args, msg)
			}
			return
		}
		for k, v := range setup.plan.Lab.ModeOptions {
			ok := false
			for _, n := range nets {
				m, err := netmode.Get(n)
				if err != nil {
					t.Fatal(err)
				}
				if spec, found := option.Find(netmode.OptionsOf(m), k); found && spec.Check(v) == nil {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("%q: accepted %s=%q, which none of %v takes", args, k, v, nets)
			}
		}
	})
}

// FuzzReport: `cnperf report` (and compare) on arbitrary bytes never
// panics: a file that is not a run is one error line; one that parses is
// rendered in every way the commands render a run.
func FuzzReport(f *testing.F) {
	// every stored run file is a seed; when fuzzing, only the small ones
	// (a mutation of a 190 kB file takes the fuzzer seconds per input)
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	paths, _ := filepath.Glob(filepath.Join(runFiles, "*.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if !fuzzing || len(b) < 20_000 {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "{}", "null", `{"schema":"cnperf/run/v1"}`, `{"schema":"cnperf/run/v1","results":[{}],"summaries":[{}]}`,
		`{"schema":"cnperf/run/v1","incomplete":true,"cells_planned":-1,"cells_done":7}`, "\x00\xff"} {
		f.Add([]byte(s))
	}
	hgrm := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		run, err := result.Parse("fuzz.json", b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line", err)
			}
			return
		}
		var out bytes.Buffer
		report.Table(&out, run)
		_ = report.Ratios(io.Discard, run, "tcp_stream", "iperf3_tcp")
		_ = report.Ratios(io.Discard, run, "tcp_rr", "sockperf_tcp")
		files, _ := report.WriteHgrm(hgrm, run, false)
		for _, f := range files {
			if filepath.Dir(f) != hgrm {
				t.Errorf("wrote %s, outside the folder named (%s)", f, hgrm)
			}
			os.Remove(f)
		}
		rc := stats.CompareRuns(run, run, report.FiguresOf, stats.Default)
		report.PrintComparison(io.Discard, rc, run, run, rc.Gate(0.1))
		if run.Incomplete && !strings.HasPrefix(out.String(), "incomplete run: ") {
			t.Fatalf("an incomplete run's report does not start by saying so: %q", out.String())
		}
		stats.Summarize(run, report.FiguresOf)
		report.Table(io.Discard, run)
	})
}
