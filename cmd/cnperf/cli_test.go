package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/ground"
	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/labtest"
	"github.com/cnperf/cnperf/internal/plan"
)

func TestBuildCases(t *testing.T) {
	cases := []struct {
		name       string
		networks   []string
		placements []string
		want       []plan.Case
		err        string
	}{
		{"natural placement plus baseline", []string{"vxlan"}, nil,
			[]plan.Case{{Network: "baseline", Placement: ground.CrossHost}, {Network: "vxlan", Placement: ground.CrossHost}}, ""},
		{"explicit", []string{"host", "vxlan"}, []string{"cross-host"},
			[]plan.Case{{Network: "baseline", Placement: ground.CrossHost}, {Network: "host", Placement: ground.CrossHost}, {Network: "vxlan", Placement: ground.CrossHost}}, ""},
		{"refused", []string{"bridge"}, []string{"cross-host"}, nil, "single-host"},
		{"none cross", []string{"none"}, []string{"cross-host"}, nil, "loopback only"},
		{"same-pod has no baseline", []string{"container"}, nil,
			[]plan.Case{{Network: "container", Placement: ground.SamePod}}, ""},
		{"unknown network", []string{"flanel"}, nil, nil, "unknown network"},
		{"unknown placement", []string{"vxlan"}, []string{"far"}, nil, "unknown placement"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := plan.Cases(plan.LabPlacer{}, c.networks, c.placements, false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func cnperf(t *testing.T) string { return labtest.AgentBinary(t) }

// badInputs are the bad inputs of the adversarial probe of issue 11 (the
// defects it found, marked, and the ones it found already handled) and
// more: each must fail with one line on stderr naming the problem (want)
// and leave nothing behind. OUT in an argument is replaced by a path in
// the case's own empty folder, which must stay empty.
var badInputs = []struct {
	args []string
	want string
}{
	// unknown or malformed names and values
	{[]string{"run", "--networks", "nope"}, "unknown network"},
	{[]string{"run", "--workloads", "tcp_nope"}, "unknown workload"},
	{[]string{"run", "--placement", "far"}, "unknown placement"},
	{[]string{"run", "--lb", "nope"}, "unknown load balancer"},
	{[]string{"run", "--suite", "nope"}, "unknown suite"},
	{[]string{"run", "--networks", "bridge", "--placement", "cross-host"}, "single-host"},
	{[]string{"run", "--networks", "none", "--placement", "cross-host"}, "loopback only"},
	{[]string{"run", "--duration", "fast"}, `--duration "fast": want a duration such as 5s`},
	{[]string{"run", "--duration", "-1s"}, "out of range"},
	{[]string{"run", "--duration", "100h"}, "at most 1h"},
	{[]string{"run", "--message-size", "-3"}, "message size"},
	{[]string{"run", "--message-size", "big"}, "message size must be positive numbers"},
	{[]string{"run", "--mtu", "99"}, "MTU"},
	{[]string{"run", "--mtu", "100000"}, "MTU"},
	{[]string{"run", "--repeat", "-1"}, "use 1 to"},
	{[]string{"run", "--repeat", "1000000"}, "use 1 to"},
	{[]string{"run", "--direction", "sideways"}, "direction"},
	{[]string{"run", "--cpu-latency", "abc"}, "microseconds, off or auto"},
	{[]string{"run", "--pin", "x"}, "two CPU numbers"},
	{[]string{"run", "--pin", "0,1,2"}, "two CPUs"},
	{[]string{"run", "--pin", "99,100"}, "cannot pin to CPU 99"},
	{[]string{"run", "--mode-opt", "novalue"}, "use key=value"},
	{[]string{"run", "--mode-opt", "=1"}, "use key=value"},
	{[]string{"run", "--services", "10"}, "--services needs --lb"},
	{[]string{"run", "--lb", "iptables", "--services", "0"}, "use 1 to"},
	{[]string{"run", "--lb", "iptables", "--services", "-1"}, "use 1 to"},
	{[]string{"run", "--lb", "iptables", "--services", "abc"}, "use numbers"},
	{[]string{"run", "--workloads", "startup", "--startup-pods", "-5"}, "use 1 to 1000"},
	{[]string{"run", "--bogus"}, "unknown flag --bogus"},
	{[]string{"run", "extra"}, "unexpected argument"},
	{[]string{"run", "--networks", "host", "RUNID=a/b"}, "letters and digits"},
	{[]string{"run", "--networks", "host", "RUNID=../x"}, "letters and digits"},
	// issue 11, defect 2: nothing to do is an error
	{[]string{"run", "--networks", ","}, "names nothing"},
	{[]string{"run", "--workloads", " , "}, "names nothing"},
	{[]string{"run", "--placement", ","}, "names nothing"},
	{[]string{"run", "--lb", ","}, "names nothing"},
	// issue 11, defect 3: options that do not apply are errors naming what they apply to
	{[]string{"run", "--networks", "host-gw", "--mode-opt", "bogus=1"}, `no network takes "bogus"`},
	{[]string{"run", "--networks", "vxlan", "--mode-opt", "encrypt=aes-gcm"}, "it is an option of weave"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--rate", "100"}, "--rate applies to"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--direction", "up"}, "--direction applies to"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--startup-pods", "5"}, "--startup-pods applies to --density, startup, startup_cni only"},
	{[]string{"run", "--startup-pods", "-5"}, "--startup-pods applies to --density, startup, startup_cni only"},
	// issue 11, defect 4: results checked before anything is built; ids bounded
	{[]string{"run", "--networks", "host", "--out", "/nonexistent/dir/x.json"}, "does not exist; create it first"},
	{[]string{"run", "--networks", "host", "--out", "/proc/version"}, "--out /proc/version: cannot write under /proc"},
	{[]string{"run", "--networks", "host", "--out", "/tmp"}, "not a regular file"},
	{[]string{"run", "--networks", "host", "--out", "OUT/no/such/dir/r.json"}, "does not exist; create it first"},
	{[]string{"run", "--networks", "host", "--out", ""}, "is empty"},
	{[]string{"run", "--networks", "host", "RUNID=" + strings.Repeat("a", 200)}, "use at most 24"},
	// issue 11, defect 5: a zero that would silently mean the default
	{[]string{"run", "--duration", "0"}, "--duration 0: use a positive value"},
	{[]string{"run", "--repeat", "0"}, "--repeat 0: use a positive value"},
	{[]string{"run", "--message-size", "0"}, "--message-size 0: use a positive value"},
	{[]string{"run", "--startup-pods", "0"}, "--startup-pods 0: use a positive value"},
	{[]string{"run", "--suite", ""}, "is empty"},
	{[]string{"run", "--rate", ""}, "is empty"},
	// issue 27: scenario files, every scenario checked before any runs
	{[]string{"run", "-f", "../cnperf/testdata/scenario_unknown_key.yaml"}, `scenario_unknown_key.yaml:3: unknown key "netwroks" in scenario "typo" (did you mean "networks"?); the keys are the flags of cnperf run, see cnperf run -h`},
	{[]string{"run", "-f", "OUT/none.yaml"}, "none.yaml: no such file; name a scenario file"},
	{[]string{"run", "--file", "../cnperf/testdata/scenario_bad_network.yaml"}, `scenario_bad_network.yaml:5: scenario "bad-network": unknown network "nope"`},
	{[]string{"run", "-f", "../cnperf/testdata/scenario_bad_network.yaml", "--networks", "host", "--out", "OUT/r.json"}, `is scenario "good"'s too; give each scenario its own out:`},
	{[]string{"suites", "--show", "nope"}, `unknown suite "nope"`},
	// other commands
	{[]string{"frobnicate"}, "unknown command"},
	{[]string{"report"}, "name a results file"},
	{[]string{"report", "/nonexistent.json"}, "no such file; name a results file"},
	{[]string{"report", "/etc"}, "is a folder; name a results file"},
	{[]string{"report", "/etc/passwd"}, "not a cnperf results file"},
	{[]string{"report", "a", "b"}, "a: no such file; name a results file"},
	{[]string{"report", "--bogus"}, "unknown flag --bogus"},
	{[]string{"report", "../../internal/report/testdata/reference.json", "--ratio", "tcp_rr"}, "want two workloads as A:B"},
	{[]string{"recommend", "--profile", "mixed", "--max-time", "10s"}, "above --max-time 10s"},
	{[]string{"recommend", "--profile", "latency", "--repeat", "0"}, "must be above 0"},
	{[]string{"recommend", "--profile", "latency", "--constraint", "encryption,no-l2-adjacency"}, "the constraints remove every network"},
	{[]string{"recommend", "--profile", "latency", "--networks", "nope"}, "unknown network"},
	{[]string{"recommend", "/nonexistent.json", "--profile", "latency", "--repeat", "2"}, "--repeat is for measuring"},
	{[]string{"compare"}, "want two results files"},
	{[]string{"compare", "/etc/passwd"}, "want two results files"},
	{[]string{"compare", "/etc/passwd", "/etc/passwd"}, "not a cnperf results file"},
	{[]string{"clean", "--bogus"}, "unknown flag --bogus"},
	{[]string{"clean", "extra"}, "unexpected argument"},
	{[]string{"networks", "--bogus"}, "unknown flag --bogus"},
	{[]string{"workloads", "extra"}, "unexpected argument"},
	{[]string{"suites", "extra"}, "unexpected argument"},
	{[]string{"version", "extra"}, "unexpected argument"},
	{[]string{"lab", "--network", "nope"}, "unknown network"},
	{[]string{"load", "pace"}, "name the rates"},
	{[]string{"load", "pace", "--rate", "10k"}, "positive whole numbers"},
	{[]string{"load", "pace", "--rate", "1000", "--threads", "0"}, "must be positive"},
	{[]string{"load", "serve"}, "name a command: http, tcp, nginx, tcp_rr, tcp_stream"},
	{[]string{"load", "serve", "nope"}, `unknown load serve command "nope"; use one of http, tcp, nginx, tcp_rr, tcp_stream`},
	// experiment flags nothing selected would use
	{[]string{"run", "--networks", "host", "--workloads", "http_rate", "--neighbours", "busy:2"}, "--neighbours applies to"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--neighbours", "busy:2", "--parallel", "2"}, "cannot be combined with --neighbours"},
	{[]string{"run", "--networks", "host", "--workloads", "http_rate", "--parallel", "2"}, "--parallel applies to"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--pods", "4"}, "applies to the alltoall workload"},
	{[]string{"run", "--networks", "host", "--workloads", "tcp_rr", "--spread", "balanced"}, "applies to the alltoall workload"},
	// seed 002's blocking time (issue 12)
	{[]string{"run", "--networks", "host-gw", "--workloads", "blocking", "--rate", "10k"}, `--rate "10k" for blocking: use one number`},
	{[]string{"run", "--networks", "host-gw", "--workloads", "blocking", "--connections", "0"}, `--connections "0" for blocking`},
	{[]string{"run", "--networks", "host-gw", "--workloads", "blocking", "--response-size", "100"}, `--response-size "100" for blocking`},
	{[]string{"run", "--networks", "host-gw", "--workloads", "blocking", "--message-size", "100"}, "--message-size and --direction do not apply"},
	{[]string{"run", "--networks", "bridge", "--workloads", "blocking", "--backend", "docker"}, "runs on the local lab only: use --backend lab"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--response-size", "400"}, "applies to http_qps, http_rate, tcp_rate, wrk_http, blocking"},
	// --tuning (issue 12)
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", "fast"}, `unknown tuning "fast"; use one of none, study`},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", "study,study"}, "names study twice"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", "none,"}, "names an empty profile"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", ","}, "names nothing"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "blocking", "--tuning", "study"}, "--tuning applies to plain pair cells (e.g. tcp_rr, tcp_stream, http_rate, as the seed-latency suite does) only, not the blocking experiment (blocking)"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "alltoall", "--tuning", "study"}, "not the alltoall experiment (alltoall)"},
	// the refusal names the knob, not the workload it shares with plain pairs
	{[]string{"run", "--suite", "sizes", "--tuning", "study"}, "not a --message-size sweep (tcp_stream,udp_stream); drop --tuning"},
	{[]string{"run", "--suite", "interference", "--tuning", "none,study"}, "not --neighbours (tcp_stream,tcp_rr)"},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--message-size", "64,1024", "--tuning", "study"}, "not a --message-size sweep (tcp_rr)"},
	{[]string{"run", "--networks", "bridge", "--workloads", "tcp_rr", "--tuning", "study", "--backend", "docker"}, "use --backend lab"},
	// the docker backend (issue 14)
	{[]string{"run", "--backend", "podman", "--networks", "bridge"}, `unknown backend "podman"`},
	{[]string{"run", "--backend", "docker", "--workloads", "tcp_rr"}, "name the networks to run"},
	{[]string{"run", "--backend", "docker", "--networks", "vxlan"}, `docker backend has no network "vxlan"`},
	{[]string{"run", "--backend", "docker", "--networks", "bridge", "--placement", "cross-host"}, "one Docker engine is one host"},
	{[]string{"run", "--backend", "docker", "--networks", "macvlan"}, "cannot run macvlan: its parent link would be in this machine's own network namespace, which cnperf never changes; use --backend docker-lab"},
	{[]string{"run", "--backend", "docker", "--networks", "bridge", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, "no Docker engine reachable"},
	{[]string{"clean", "--backend", "docker", "DOCKER_HOST=unix:///nonexistent/docker.sock"}, "no Docker engine reachable"},
	// docker-lab: an engine per lab host (issue 14)
	{[]string{"run", "--backend", "docker-lab", "--networks", "container"}, `docker-lab has no network "container"`},
	{[]string{"run", "--backend", "docker-lab", "--networks", "overlay"}, "docker-overlay"},
	{[]string{"run", "--backend", "docker-lab", "--networks", "bridge", "--placement", "cross-host"}, "use --placement same-host"},
	{[]string{"run", "--backend", "lab,docker-lab", "--networks", "host", "--mode-opt", "userland-proxy=false"}, "docker-lab:nat"},
	{[]string{"run", "--backend", "docker-lab", "--networks", "nat", "--mode-opt", "seccomp=off"}, "one of default, unconfined"},
	{[]string{"clean", "--backend", "podman"}, "use lab, docker, docker-lab or kubernetes"},
	// the kubernetes backend (issue 15)
	{[]string{"run", "--backend", "kubernetes", "--workloads", "tcp_rr"}, "--backend kubernetes needs --image"},
	{[]string{"run", "--networks", "host", "--image", "cnperf:1"}, "--image applies to --backend kubernetes; drop it"},
	{[]string{"run", "--networks", "host", "--kubeconfig", "/etc/passwd"}, "--kubeconfig applies to --backend kubernetes"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--namespace-prefix", "X"}, `--namespace-prefix "X": use up to 30 lower-case`},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--networks", "vxlan"}, `kubernetes backend has no network "vxlan"`},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--networks", "baseline", "--placement", "same-pod"}, "on kubernetes, baseline runs cross-host, same-host"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--lb", "iptables"}, "on --backend kubernetes use --lb cluster"},
	{[]string{"run", "--networks", "bridge", "--lb", "cluster"}, "--lb cluster is served by --backend kubernetes; use it there"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--kubeconfig", "/nonexistent/kubeconfig", "--placement", "same-node,cross-node"}, "--kubeconfig /nonexistent/kubeconfig: no such file or directory; give the cluster's kubeconfig file"},
	{[]string{"clean", "--backend", "kubernetes", "--kubeconfig", "/nonexistent/kubeconfig"}, "--kubeconfig /nonexistent/kubeconfig: no such file or directory"},
	{[]string{"clean", "--kubeconfig", "/etc/passwd"}, "--kubeconfig applies to clean --backend kubernetes; drop it"},
	// placement and the agent image on a real cluster (issue 24)
	{[]string{"run", "--networks", "host", "--nodes", "n1,n2"}, "--nodes applies to --backend kubernetes; drop it"},
	{[]string{"run", "--networks", "host", "--tolerate", "a:NoSchedule"}, "--tolerate applies to --backend kubernetes"},
	{[]string{"run", "--networks", "host", "--placement", "cross-zone"}, "--placement cross-zone chooses nodes of two zones of a cluster; use it with --backend kubernetes alone"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--tolerate", "dedicated"}, "toleration \"dedicated\" has no effect; use KEY[=VALUE]:EFFECT"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--node-selector-client", "zone"}, "is not a node label K=V; use such as"},
	{[]string{"run", "--backend", "kubernetes", "--image", "cnperf:1", "--image-pull-secret", "Bad Name"}, "--image-pull-secret \"Bad Name\": use NAME or NAMESPACE/NAME"},
	{[]string{"image", "push"}, "push where? use `cnperf image push REGISTRY/REPOSITORY:TAG`"},
	{[]string{"image", "frobnicate"}, `unknown image command "frobnicate"; use`},
	// issue 27: every output path checked before any work
	{[]string{"run", "--networks", "host", "--csv", "/etc/hostname"}, "--csv /etc/hostname: not a folder"},
	{[]string{"run", "--networks", "host", "--openmetrics", "OUT/no/m.prom"}, "does not exist"},
	{[]string{"run", "--networks", "host", "--ndjson", "/proc/x.ndjson"}, "cannot write under /proc"},
	{[]string{"report", "../../internal/report/testdata/summaries.json", "--csv", "/etc/hostname"}, "--csv /etc/hostname: not a folder"},
	{[]string{"report", "../../internal/report/testdata/summaries.json", "--openmetrics", "OUT"}, "not a regular file"},
	{[]string{"report", "../../internal/report/testdata/summaries.json", "--ndjson", "OUT/no/x.ndjson"}, "does not exist"},
	{[]string{"report", "../../internal/report/testdata/summaries.json", "--hgrm", "/etc/hostname"}, "--hgrm /etc/hostname: not a folder"},
	{[]string{"compare", "../../internal/report/testdata/summaries.json", "../../internal/report/testdata/summaries.json", "--json", "OUT/no/c.json"}, "--json"},
	{[]string{"compare", "../../internal/report/testdata/summaries.json", "../../internal/report/testdata/summaries.json", "--fail-on-regression", "10", "--junit", "/proc/gate.xml"}, "cannot write under /proc"},
	{[]string{"image", "build", "--out", "/proc/agent.tar"}, "--out /proc/agent.tar: cannot write under /proc"},
	{[]string{"image", "build", "--out", "OUT/no/agent.tar"}, "does not exist; create it first"},
	{[]string{"recommend", "--profile", "latency", "--out", "/proc/r.json"}, "--out /proc/r.json: cannot write under /proc"},
	{[]string{"bench", "lab", "--out", "OUT/no/bench.json"}, "does not exist; create it first"},
	{[]string{"load", "tcp_rr", "127.0.0.1:9", "--json", "/proc/l.json"}, "--json /proc/l.json: cannot write under /proc"},
	{[]string{"load", "http_rate", "http://127.0.0.1:9/", "--hgrm", "/etc/hostname"}, "--hgrm /etc/hostname: not a folder"},
	// issue 27: one command line. Its concrete complaints first
	{[]string{"load", "nosuch"}, `unknown load command "nosuch"; use one of http_qps, http_rate`},
	{[]string{"load", "http_rate"}, "name the target: cnperf load http_rate http://HOST:PORT/PATH"},
	{[]string{"load", "tcp_rate", "--rate", "100"}, "name the target: cnperf load tcp_rate HOST:PORT"},
	{[]string{"run", "--duration", "5"}, "--duration 5: a duration needs its unit: write 5s"},
	{[]string{"run", "--networks", "host", "--repeat", "2", "--duration", "1"}, "write 1s"},
	{[]string{"load", "pace", "--rate", "1000", "--duration", "2"}, "write 2s"},
	{[]string{"tund", "--dev"}, "--dev needs a value"},
	{[]string{"tund"}, "tund needs --dev and --listen"},
	{[]string{"tund", "--dev", "t0", "--listen", "nope"}, `--listen "nope"`},
	{[]string{"agent", "--listen"}, "--listen needs a value"},
	{[]string{"agent"}, "--listen is required"},
	// a misspelt command, flag or name: did you mean
	{[]string{"runn"}, `unknown command "runn"; did you mean "run"?`},
	{[]string{"cluster", "stauts"}, `did you mean "status"?`},
	{[]string{"bench", "lba"}, `unknown bench command "lba"; did you mean "lab"?`},
	{[]string{"load", "htp_rate", "http://127.0.0.1:9/"}, `did you mean "http_rate"?`},
	{[]string{"load", "serve", "ngnix"}, `did you mean "nginx"?`},
	{[]string{"run", "--netwroks", "host"}, `unknown flag --netwroks; did you mean "--networks"?`},
	{[]string{"report", "../../internal/report/testdata/summaries.json", "--cvs", "OUT"}, `did you mean "--csv"?`},
	{[]string{"run", "--networks", "vxlna"}, `unknown network "vxlna"; did you mean "vxlan"?`},
	{[]string{"run", "--workloads", "tcp_strem"}, `did you mean "tcp_stream"?`},
	{[]string{"run", "--suite", "overlay"}, `unknown suite "overlay"; did you mean "overlays"?`},
	{[]string{"run", "--backend", "dokcer"}, `unknown backend "dokcer"; did you mean "docker"?`},
	{[]string{"run", "--lb", "iptabels"}, `did you mean "iptables"?`},
	{[]string{"run", "--placement", "cross-hots"}, `did you mean "cross-host"?`},
	{[]string{"run", "--networks", "host-gw", "--workloads", "tcp_rr", "--tuning", "stduy"}, `did you mean "study"?`},
	{[]string{"recommend", "--profile", "latncy"}, `did you mean "latency"?`},
	{[]string{"lab", "--network", "vxln"}, `did you mean "vxlan"?`},
	{[]string{"completion", "bsh"}, `no completion for "bsh"; did you mean "bash"?`},
	// flags: values, switches, where they go
	{[]string{"run", "--mtu", "abc"}, `--mtu "abc": want a whole number`},
	{[]string{"run", "--quiet=maybe"}, `--quiet "maybe": want true or false`},
	{[]string{"run", "--networks"}, "--networks needs a value"},
	{[]string{"run", "---networks", "host"}, "bad flag syntax"},
	{[]string{"networks", "-v", "extra"}, `unexpected argument "extra"`},
	{[]string{"report", "--", "--csv"}, "--csv: no such file"},
	{[]string{"compare", "a.json", "b.json", "c.json"}, "want two results files, got 3"},
	{[]string{"recommend", "a.json", "b.json", "--profile", "latency"}, `unexpected argument "b.json"`},
	{[]string{"image", "push", "a:1", "b:2"}, `unexpected argument "b:2"`},
	{[]string{"bench"}, "name a command: lab"},
	{[]string{"completion"}, "name one shell"},
	{[]string{}, "name a command: run, networks"},
	{[]string{"--bogus"}, "unknown flag --bogus"},
}

// failures are the bad inputs that are not bad usage: an input file that
// cannot be read or is not cnperf's, an engine that does not answer (exit
// status 1); every other bad input is refused as bad usage (2).
var failures = []string{"no such file; name a results file", "is a folder; name a results file", "not a cnperf results file", "no Docker engine reachable", "--csv: no such file", "--kubeconfig /nonexistent/kubeconfig: no such file or directory"}

func wantExit(want string) int {
	for _, f := range failures {
		if strings.Contains(want, f) {
			return 1
		}
	}
	return 2
}

// fixHint is how a message names its fix: what to use, give, choose,
// select, drop, create, install, see, or an example.
var fixHint = regexp.MustCompile(`(?i)(\b(use|write|did you mean|give|choose|select|drop|create|install|see|name|leave it out|lists?|want|must be|at most|letters and digits|run it as|appl(y|ies)|read it with)\b|e\.g\.)`)

// TestBadInput checks that bad input gives its exit status (2 for bad
// usage, 1 for a failure), one line on stderr naming the problem and its
// fix, nothing on stdout, and leaves nothing behind: no namespace, no
// state folder, no results file or folder.
func TestBadInput(t *testing.T) {
	bin := cnperf(t)
	for i, c := range badInputs {
		id := fmt.Sprintf("bad%d%s", i, lab.NewID())
		args := append([]string(nil), c.args...)
		if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "RUNID=") {
			last := args[len(args)-1]
			id = strings.TrimPrefix(last, "RUNID=")
			args = args[:len(args)-1]
		}
		var env []string
		if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "DOCKER_HOST=") {
			last := args[len(args)-1]
			env = append(env, last)
			args = args[:len(args)-1]
		}
		dir := t.TempDir()
		for j, a := range args {
			args[j] = strings.Replace(a, "OUT", dir, 1)
			if strings.HasPrefix(a, "../") {
				args[j], _ = filepath.Abs(a)
			}
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir // where a default results folder would appear
		cmd.Env = append(append(os.Environ(), "CNPERF_RUN_ID="+id), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			t.Errorf("%q: exit 0, want failure", c.args)
			continue
		}
		if code, want := cmd.ProcessState.ExitCode(), wantExit(c.want); code != want {
			t.Errorf("%q: exit status %d, want %d (%s)", c.args, code, want, strings.TrimSpace(stderr.String()))
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: printed %q on stdout before failing", c.args, stdout.String())
		}
		msg := strings.TrimRight(stderr.String(), "\n")
		if strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
			t.Errorf("%q: stderr %q, want one line containing %q", c.args, msg, c.want)
		}
		if !fixHint.MatchString(msg) {
			t.Errorf("%q: %q names no fix", c.args, msg)
		}
		if left := leftBehind(id, dir); left != "" {
			t.Errorf("%q left %s behind", c.args, left)
		}
	}
}

// leftBehind names what a run with id left: namespaces, a state folder,
// files in its folder, /nonexistent.
func leftBehind(id, dir string) string {
	var left []string
	if ns := namespaces(); strings.Contains(ns, "cnperf-"+id+"-") || strings.Contains(ns, "cnperf-"+id+"s") {
		left = append(left, "namespaces "+ns)
	}
	if _, err := os.Stat(filepath.Join(lab.StateRoot, id)); err == nil && id != "" && !strings.Contains(id, "/") {
		left = append(left, "state folder "+filepath.Join(lab.StateRoot, id))
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		left = append(left, fmt.Sprintf("%d files in its folder (%s...)", len(ents), ents[0].Name()))
	}
	if _, err := os.Stat("/nonexistent"); err == nil {
		left = append(left, "/nonexistent")
	}
	return strings.Join(left, ", ")
}

func TestNotRoot(t *testing.T) {
	labtest.NeedRoot(t) // to switch to another user
	bin := cnperf(t)
	dir, err := os.MkdirTemp("", "cnperf-notroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	nb := filepath.Join(dir, "cnperf")
	b, _ := os.ReadFile(bin)
	if err := os.WriteFile(nb, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	cmd := exec.Command(nb, "run", "--networks", "vxlan")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs root") {
		t.Fatalf("as nobody: err %v, output %q; want a 'needs root' error", err, out)
	}
}

func namespaces() string {
	ents, _ := os.ReadDir("/run/netns")
	var n []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "cnperf-") {
			n = append(n, e.Name())
		}
	}
	return strings.Join(n, " ")
}

var labID = regexp.MustCompile(`\(lab ([0-9a-f]+)\)`)

// startRun starts a cnperf run and returns once its lab is up, with its id.
func startRun(t *testing.T, args ...string) (*exec.Cmd, string) {
	cmd := exec.Command(cnperf(t), append([]string{"run", "--out", filepath.Join(t.TempDir(), "r.json")}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	id := ""
	deadline := time.Now().Add(30 * time.Second)
	for sc.Scan() && time.Now().Before(deadline) {
		if m := labID.FindStringSubmatch(sc.Text()); m != nil {
			id = m[1]
		}
		if strings.Contains(sc.Text(), "ready in") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if id == "" {
		_ = cmd.Process.Kill()
		t.Fatal("the run never reported its lab")
	}
	time.Sleep(300 * time.Millisecond) // mid-measurement
	return cmd, id
}

func TestInterruptTearsDown(t *testing.T) {
	labtest.NeedRoot(t)
	cmd, id := startRun(t, "--networks", "vxlan", "--duration", "5s", "--no-baseline")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil {
		t.Error("an interrupted run exited 0")
	}
	labtest.AssertClean(t, id)
}

func TestKill9ThenClean(t *testing.T) {
	labtest.NeedRoot(t)
	cmd, id := startRun(t, "--networks", "nat", "--duration", "5s", "--no-baseline")
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !strings.Contains(namespaces(), "cnperf-"+id+"-") {
		t.Fatal("expected the killed run's namespaces to be left for clean")
	}
	// --id: other packages' tests run labs concurrently; leave them be
	out, err := exec.Command(cnperf(t), "clean", "--id", id).CombinedOutput()
	if err != nil {
		t.Fatalf("clean: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "removed run "+id) {
		t.Errorf("clean output %q does not mention run %s", out, id)
	}
	labtest.AssertClean(t, id)
}

func TestMissingCommand(t *testing.T) {
	labtest.NeedRoot(t)
	dir := t.TempDir()
	for _, c := range []string{"ip", "sysctl"} {
		p, err := exec.LookPath(c)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(p, filepath.Join(dir, c)); err != nil {
			t.Fatal(err)
		}
	}
	id := "miss" + lab.NewID()
	cmd := exec.Command(cnperf(t), "run", "--networks", "nat")
	cmd.Env = append(os.Environ(), "PATH="+dir, "CNPERF_RUN_ID="+id)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "apt-get install iptables") {
		t.Fatalf("err %v, output %q; want the missing iptables named with its fix", err, out)
	}
	if strings.Contains(namespaces(), "cnperf-"+id+"-") {
		t.Errorf("left namespaces behind: %q", namespaces())
	}
}

// TestBrokenPipeAndHangUp: a run whose output pipe closes (`cnperf run |
// head`) goes on and tears its lab down instead of dying on SIGPIPE; a
// hang-up of its terminal (SIGHUP) is an interrupt.
func TestBrokenPipeAndHangUp(t *testing.T) {
	labtest.NeedRoot(t)
	for _, c := range []struct {
		name string
		act  func(cmd *exec.Cmd, out, errs io.ReadCloser)
		ok   bool // exit 0 expected
	}{
		{"pipe", func(_ *exec.Cmd, out, errs io.ReadCloser) { out.Close(); errs.Close() }, true},
		{"hangup", func(cmd *exec.Cmd, _, _ io.ReadCloser) { _ = cmd.Process.Signal(syscall.SIGHUP) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(cnperf(t), "run", "--out", filepath.Join(t.TempDir(), "r.json"),
				"--networks", "host-gw", "--workloads", "tcp_rr", "--duration", "1s", "--repeat", "2", "--no-baseline")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			errs, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(errs)
			id := ""
			for sc.Scan() {
				if m := labID.FindStringSubmatch(sc.Text()); m != nil {
					id = m[1]
				}
				if strings.Contains(sc.Text(), "ready in") {
					break
				}
			}
			if id == "" {
				_ = cmd.Process.Kill()
				t.Fatal("the run never reported its lab")
			}
			c.act(cmd, out, errs)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatal("the run did not end")
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Errorf("the run died of %v", ws.Signal())
			}
			if (err == nil) != c.ok {
				t.Errorf("exit %v, want success %v", err, c.ok)
			}
			labtest.AssertClean(t, id)
		})
	}
}
